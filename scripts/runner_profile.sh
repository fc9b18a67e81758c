#!/usr/bin/env bash
# Where a sandboxed runner's time goes on a GPU machine: `ladder bench` of a few operators (one job, confined, no
# torch.compile) under py-spy, sampling every process it starts (the runners inside the sandbox too), written as
# collapsed stacks per process. Read them with `python -m tools.profile_summary FILE`.
#   scripts/runner_profile.sh OUT_DIR [OPS]
# Needs py-spy (a carried wheel on the H200 device machine, with the others of scripts/gpu_smoke.sh).
set -u
out=$1 ops=${2:-sum_dim1,softmax,new_gelu}
mkdir -p "$out"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /opt/irsite .whl/*.whl \
    || exit 1
  export PYTHONPATH=/opt/irsite:$PWD PATH=/opt/irsite/bin:$PATH
fi
export PYTHONUNBUFFERED=1
py-spy record --subprocesses --idle --format raw --rate 40 -o "$out/stacks.txt" -- \
  python3 -m ladder.cli bench --ops "$ops" --compile-cases none --out "$out/bench" > "$out/bench.log" 2>&1
echo "bench and profile: exit $?"
