#!/usr/bin/env bash
# Where a multi-job suite run's time goes on a GPU machine: scripts/h200_suite.sh under py-spy (every process it
# starts, the sandboxed runners and the tuning children too, as raw stacks per process) with the load and the
# busiest processes sampled every 5 s. Read the stacks with `python -m tools.profile_summary OUT/stacks.txt`.
#   scripts/engine_probe.sh OUT_DIR DEADLINE_S [more `ladder suite` arguments]
# Needs the carried wheels of scripts/h200_suite.sh, py-spy among them.
set -u
out=$1 deadline=$2
shift 2
mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /opt/irsite .whl/*.whl \
  || exit 1
export PATH=/opt/irsite/bin:$PATH
(
  while sleep 5; do
    echo "=== $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    top -b -n1 -w 160 -o %CPU | sed -n '8,22p'
  done
) > "$out/top.log" 2>&1 &
sampler=$!
py-spy record --subprocesses --idle --format raw --rate 20 -o "$out/stacks.txt" -- \
  scripts/h200_suite.sh "$out/run" "$deadline" "$@" > "$out/suite.log" 2>&1
status=$?
kill "$sampler"
echo "suite under py-spy: exit $status"
exit $status
