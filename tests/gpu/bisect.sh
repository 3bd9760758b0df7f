#!/usr/bin/env bash
# Which collector feature makes torch jobs hang: each variant gets 30 s.
cd "$(dirname "$0")/../.."
GS=$PWD/.carry/bin/gpuscope
try() {
  local name=$1; shift
  local t0=$(date +%s)
  env "$@" timeout -s KILL 30 $GS record --force -o /tmp/b_$name.db ${TRACE:-} -- python3 samples/torch/train_mlp.py --steps 3 > /tmp/b_$name.out 2>&1
  local rc=$?
  local k=$(python3 -c "import sqlite3;c=sqlite3.connect('/tmp/b_$name.db');print(c.execute('select count(*) from kernel').fetchone()[0], c.execute('select count(*) from api_call').fetchone()[0])" 2>&1)
  echo "variant $name: rc=$rc secs=$(( $(date +%s) - t0 )) kernels,api=$k  $(grep -o 'median_step_ms": [0-9.]*' /tmp/b_$name.out)"
}
TRACE="--trace cuda,memory,nvml" try no_nvtx_no_torch
try no_driver GPUSCOPE_DRIVER_API=0
try no_periodic_flush GPUSCOPE_PERIODIC_FLUSH=0
TRACE="--trace cuda" try cuda_only GPUSCOPE_DRIVER_API=0 GPUSCOPE_PERIODIC_FLUSH=0
