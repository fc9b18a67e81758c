#!/usr/bin/env bash
# One device call that checks the harness engine (docs/results/engine-h200/README.md, session 6): shared device
# memory across the sandbox (tools/device_memory_probe.py), the GPU smoke run, then the twelve-operator probe on ten
# jobs for the time the call has left.
#   scripts/engine_check.sh [LIMIT_S]      LIMIT_S: the device call's limit in seconds (default 540)
# Carry .whl, out/compiler-index.db and (cached baselines of the same GPU) out/probe-baselines.json.
set -u
LIMIT=${1:-540}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /opt/irsite .whl/*.whl
export PYTHONPATH=/opt/irsite:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
(timeout 60 python3 -m tools.device_memory_probe --mib 1024) > $OUT/devmem.log 2>&1; cat $OUT/devmem.log
scripts/stackdump.sh 170 $OUT/smoke-stacks.txt /opt/irsite/bin/py-spy & dump=$!  # a stall explains itself
(time timeout 200 scripts/gpu_smoke.sh out/smoke) > $OUT/smoke.log 2>&1; tail -32 $OUT/smoke.log
kill $dump 2>/dev/null
find out/smoke -name progress.log -exec cp {} $OUT/smoke-progress.log \;  # heartbeats: kept even if it is cut
grep -rho '"outputs_memory": "[^"]*"' out/smoke | sort | uniq -c
deadline=$((LIMIT - SECONDS - 90))
echo "probe deadline: $deadline s"
[ $deadline -lt 60 ] && exit 0
OPS=argmax_dim1,batch_norm_train,group_norm,l2_norm,layer_norm,log_softmax,max_dim1,new_gelu,rms_norm_ch,softmax,softplus,sum_dim1
run=out/probe
timeout $((deadline + 70)) scripts/h200_suite.sh $run $deadline --rounds 10 --jobs 10 --ncu none --no-torch-compile \
  --tune-configs 10 --quiet --baseline-cache out/probe-baselines.json --ops $OPS > $OUT/probe.log 2>&1
cp $run/report.md $OUT/probe-report.md; cp $run/progress.log $OUT/probe-progress.log 2>/dev/null
cp out/probe-baselines.json $OUT/probe-baselines.json
grep -rho '"outputs_memory": "[^"]*"' $run | sort | uniq -c
grep -A22 "^| stage" $OUT/probe-report.md; grep "GPU busy" $OUT/probe-report.md
