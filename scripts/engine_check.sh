#!/usr/bin/env bash
# One device call that checks the harness engine (docs/results/engine-h200/README.md, sessions 6 and 7): shared
# device memory across the sandbox (tools/device_memory_probe.py), the GPU tests (GPUTESTS=1, or GPUTESTS="PATHS"
# for some of them), the GPU smoke run (unless SMOKE=0), then ladder suite for the time the call has left: the
# twelve-operator probe on ten jobs, or (SUITE=1) the whole offline suite, resumed from out/gpu-suite.tar.xz where
# one is carried and packed again into $OUT for the next call. JOBS: the suite's --jobs (default: 16 on a GPU of
# more than 100 GB, else 10). What comes back: the logs of each part, the report and progress log of the suite, its
# run directory, and samples.tar.xz (GPU and CPU samples every 2 s, the stack dump of every process in the middle of
# the suite, the updated baseline cache).
#   [GPUTESTS=1|"PATHS"] [SMOKE=0] [SUITE=1] [JOBS=N] [RESERVE=S] scripts/engine_check.sh [LIMIT_S]
# LIMIT_S: the call's limit (default 540); RESERVE: seconds kept after the suite's deadline (default 150). Carry .whl, out/compiler-index.db, out/probe-baselines.json (cached baselines of the same GPU) and,
# with SUITE=1, out/gpu-suite.tar.xz from the previous call.
set -u
LIMIT=${1:-540}
# the job count the GPU's memory holds (session 9: ten on an 80 GB H100, sixteen slower there), unless JOBS says
JOBS=${JOBS:-$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | awk '{print ($1 > 100000) ? 16 : 10}')}
samples=$(mktemp -d)
trap 'tar cJf $OUT/samples.tar.xz -C $samples .' EXIT  # also when the call ends before the suite
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /opt/irsite .whl/*.whl
export PYTHONPATH=/opt/irsite:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
timeout 60 python3 -m tools.device_memory_probe --mib 1024 2>&1
gputests=(tests/gpu tests/harness/test_gpu.py tests/ladder/redteam/test_gpu_timing.py)
[ "${GPUTESTS:-0}" != 0 ] && [ "${GPUTESTS:-0}" != 1 ] && read -ra gputests <<< "$GPUTESTS"  # the paths given
if [ "${GPUTESTS:-0}" != 0 ]; then
  timeout 240 python3 -m pytest -q -p no:cacheprovider "${gputests[@]}" > $OUT/gputests.log 2>&1
  tail -15 $OUT/gputests.log
fi
if [ "${SMOKE:-1}" = 1 ]; then
  scripts/stackdump.sh 170 $samples/smoke-stacks.txt /opt/irsite/bin/py-spy & dump=$!  # a stall explains itself
  (time timeout 200 scripts/gpu_smoke.sh out/smoke) > $OUT/smoke.log 2>&1; tail -32 $OUT/smoke.log
  kill $dump 2>/dev/null
  find out/smoke -name progress.log -exec cp {} $OUT/smoke-progress.log \;  # heartbeats: kept even if it is cut
  grep -rho '"outputs_memory": "[^"]*"' out/smoke | sort | uniq -c
fi
# after the deadline: rounds in flight finish (h200_suite.sh kills the run 60 s after it), the report, and packing
# the run directory (a resumed run's is hundreds of MB: one xz thread took more than the 30 s left, session 9)
deadline=$((LIMIT - SECONDS - ${RESERVE:-150}))  # less where the run directory is small
echo "suite deadline: $deadline s"
[ $deadline -lt 60 ] && exit 0
nvidia-smi --query-gpu=memory.used,utilization.gpu --format=csv,noheader -l 2 > $samples/gpu-samples.log & sampler=$!
# the CPU's side: load, and the busiest processes (the parent's threads share one interpreter)
while sleep 2; do
  echo "$(date +%s) $(cut -d' ' -f1-4 /proc/loadavg)"; ps -eo pcpu,rss,comm --sort=-pcpu | sed -n 2,4p
done > $samples/cpu-samples.log & cpusampler=$!
scripts/stackdump.sh $((deadline / 2)) $samples/suite-stacks.txt /opt/irsite/bin/py-spy & dump=$!
if [ "${SUITE:-0}" = 1 ]; then
  run=out/gpu-suite
  [ -f out/gpu-suite.tar.xz ] && tar xJf out/gpu-suite.tar.xz
  timeout $((deadline + 70)) scripts/h200_suite.sh $run $deadline --rounds 10 --jobs $JOBS --ncu none \
    --no-torch-compile --tune-configs 10 --quiet --baseline-cache out/probe-baselines.json > $OUT/suite.log 2>&1
  tar -I 'xz -T0 -1' -cf $OUT/gpu-suite.tar.xz $run
else
  OPS=argmax_dim1,batch_norm_train,group_norm,l2_norm,layer_norm,log_softmax,max_dim1,new_gelu,rms_norm_ch,softmax,softplus,sum_dim1
  run=out/probe
  timeout $((deadline + 70)) scripts/h200_suite.sh $run $deadline --rounds 10 --jobs $JOBS --ncu none --no-torch-compile \
    --tune-configs 10 --quiet --baseline-cache out/probe-baselines.json --ops $OPS > $OUT/suite.log 2>&1
fi
kill $sampler $cpusampler $dump 2>/dev/null
tail -3 $OUT/suite.log
cp $run/report.md $OUT/report.md; cp $run/progress.log $OUT/progress.log 2>/dev/null
cp out/probe-baselines.json $samples/probe-baselines.json
grep -rho '"outputs_memory": "[^"]*"' $run | sort | uniq -c
# the memory budget against what the runners held: the largest ratios of peak to estimate
python3 - "$run" <<'PY'
import json, pathlib, sys
pairs = []
for f in pathlib.Path(sys.argv[1]).rglob("harness.json"):
    for c in json.loads(f.read_text()).get("cases", []):
        if c.get("budget_bytes"):
            pairs.append((c["runner_peak_bytes"] / c["budget_bytes"], c["runner_peak_bytes"], f.parent.parent.name, c["case"]))
pairs.sort()
print(f"runner peak / case budget over {len(pairs)} cases: median {pairs[len(pairs) // 2][0] if pairs else 0:.2f}")
for p in pairs[-3:]:
    print(f"  {p[0]:.2f}: {p[1] / 2**30:.1f} GiB, {p[2]} {p[3]}")
PY
# an evaluation's OutOfMemoryError is in its validation runs (validation.json) or its timing (harness.json only)
grep -rl OutOfMemoryError $run --include=validation.json --include=harness.json | xargs -r -n1 dirname | sort -u | wc -l \
  | sed 's/^/evaluations with OutOfMemoryError: /'
grep -A26 "^| stage" $OUT/report.md; grep -E "Throughput|GPU busy" $OUT/report.md
