#!/usr/bin/env bash
# Which collector feature makes a torch job hang. Each variant adds ONE feature
# to a base that is known to run (--trace cuda, driver API off, periodic flush
# off) and gets LIMIT seconds on `samples/torch/train_mlp.py --steps 3`; the
# default configuration runs last. The first hang prints its stacks (cuda-gdb).
#
# Writes $OUT/bisect.txt (one line per variant) and $OUT/safe.env: the default
# configuration with every feature that hung on its own switched off, which
# run_all.sh sources so the remaining stages still run.
#
# Usage (repository root, GPU machine): OUT=/some/dir tests/gpu/bisect.sh [variant ...]
set -uo pipefail
cd "$(dirname "$0")/../.."
GS=$PWD/.carry/bin/gpuscope
OUT=${OUT:-/tmp/gpuscope_gpu_out}
LIMIT=${LIMIT:-40}
W=/tmp/gpuscope_bisect
mkdir -p "$OUT" "$W"
: > "$OUT/bisect.txt"
stacks_done=0
. tests/gpu/hang.sh

# variant NAME TRACE DRIVER FLUSH: runs the job, prints one line, returns 1 on a hang.
variant() {
  local name=$1 trace=$2 driver=$3 flush=$4
  local db=$W/$name.db t0=$SECONDS
  GPUSCOPE_DRIVER_API=$driver GPUSCOPE_PERIODIC_FLUSH=$flush \
    $GS record --force -o "$db" --trace "$trace" -- python3 samples/torch/train_mlp.py --steps 3 \
    > "$W/$name.out" 2>&1 &
  local pid=$! hung=0
  while kill -0 $pid 2>/dev/null && [ $((SECONDS - t0)) -lt "$LIMIT" ]; do sleep 0.5; done
  if kill -0 $pid 2>/dev/null; then
    hung=1
    echo "--- $name hung"
    show_hang $pid $([ $stacks_done = 0 ] && echo gdb)
    stacks_done=1
    pkill -9 -P $pid; kill -9 $pid
  fi
  wait $pid 2>/dev/null
  local rc=$?
  local counts
  counts=$(python3 - "$db" <<'PY' 2>&1
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
q = lambda t: c.execute(f"select count(*) from {t}").fetchone()[0]
print(f"kernels={q('kernel')} api={q('api_call')} ops={q('op')} ranges={q('range')} memory={q('memory_event')} counters={q('counter')}")
PY
)
  local step
  step=$(grep -o '"median_step_ms": [0-9.]*' "$W/$name.out" | head -1)
  local line="variant $name (trace=$trace driver=$driver flush=$flush): $([ $hung = 1 ] && echo HUNG || echo ran) rc=$rc $((SECONDS - t0))s $counts $step"
  echo "$line" | tee -a "$OUT/bisect.txt"
  [ $hung = 1 ] && { tail -5 "$W/$name.out"; return 1; }
  return 0
}

variants=${*:-"base driver flush memory nvml nvtx torch default"}
safe_trace="cuda,nvtx,torch" safe_driver=1 safe_flush=1
for v in $variants; do
  case $v in
  base) variant base cuda 0 0 ;;
  driver) variant driver cuda 1 0 || safe_driver=0 ;;
  flush) variant flush cuda 0 1 || safe_flush=0 ;;
  memory) variant memory cuda,memory 0 0 ;;
  nvml) variant nvml cuda,nvml 0 0 ;;
  nvtx) variant nvtx cuda,nvtx 0 0 || safe_trace=${safe_trace/,nvtx/} ;;
  torch) variant torch cuda,torch 0 0 || safe_trace=${safe_trace/,torch/} ;;
  default) variant default cuda,nvtx,torch 1 1 ;;
  esac
done
printf 'export GPUSCOPE_DRIVER_API=%s GPUSCOPE_PERIODIC_FLUSH=%s\nexport REC_TRACE=%s\n' \
  $safe_driver $safe_flush $safe_trace | tee "$OUT/safe.env"
