#!/usr/bin/env bash
# One device call of the offline suite run on the H200 machine; docs/results/offline-suite-h200/README.md has the
# calls as run. The run directory is the state: carry it to the next call and the same command resumes.
#   scripts/h200_suite.sh RUN_DIR DEADLINE_S [more `ladder suite` arguments]
# Needs, carried: .whl (jsonschema and its dependencies, absent on that machine) and out/compiler-index.db.
set -u
run=$1 deadline=$2
shift 2
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 COLUMNS=200
# Rounds in flight at the deadline finish; the hard limit after it keeps the device call's own limit safe (a killed
# run loses only unfinished rounds).
timeout --signal=KILL $((deadline + 50)) \
  python3 -m ladder.cli suite --offline --out "$run" --index out/compiler-index.db --deadline-s "$deadline" "$@"
status=$?
python3 -m ladder.cli report "$run" --json "$run/summary.json" > "$run/report.md"
python3 -m ladder.cli export "$run" -o "$run/history.jsonl"
exit $status
