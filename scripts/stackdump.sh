#!/usr/bin/env bash
# After DELAY seconds, write every process (with its kernel wait channel) and every Python process's stack to
# FILE: run it in the background beside a command that may stall, and kill it when the command ends in time.
#   scripts/stackdump.sh DELAY FILE [PY_SPY]
delay=$1 file=$2 pyspy=${3:-py-spy}
sleep "$delay"
{
  ps -eo pid,ppid,stat,etime,wchan:24,args --forest
  for pid in $(pgrep -f python); do
    echo "=== $pid: $(tr '\0' ' ' < /proc/$pid/cmdline 2>/dev/null | cut -c1-200)"
    "$pyspy" dump --pid "$pid" 2>&1
  done
} > "$file" 2>&1
