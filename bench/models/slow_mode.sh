#!/usr/bin/env bash
# What a slow recorded ResNet-50 spends its CPU on (issue 18): the plain run and
# gpuscope record (default), alternated for ROUNDS rounds; in each run
# pc_sampler.py samples the main and the autograd thread by library (libcuda,
# libcupti, libtorch, gpuscope's, the kernel) during the traced steps, and
# real_models.py --threads gives block times, per-thread CPU, steal and a pure
# Python probe. One JSON line per run in $OUT/slow_mode.jsonl. Modes: plain,
# default, torch_profiler, cupti_N=V[,N=V] (default with GPUSCOPE_CUPTI_ATTRIBUTES).
# Usage (GPU machine, repository root, .carry/bin/gpuscope):
#   OUT=/tmp/out ROUNDS=3 MODES="plain default" bash bench/models/slow_mode.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
GS=${GPUSCOPE:-$PWD/.carry/bin/gpuscope}
OUT=${OUT:-/tmp/gpuscope_gpu_out}
PY=${PYTHON:-python3}
MODEL=${MODEL:-resnet50}
LIMIT=${LIMIT:-90}
mkdir -p "$OUT"
read -r -a modes <<< "${MODES:-plain default}"
for round in $(seq "${ROUNDS:-3}"); do
  for i in "${!modes[@]}"; do
    mode=${modes[$(((i + round - 1) % ${#modes[@]}))]}
    cmd=() envs=() extra=()
    record=("$GS" record --force -o "$OUT/slow.db" --)
    case $mode in
    plain) ;;
    default) cmd=("${record[@]}") ;;
    torch_profiler) extra=(--torch-profiler) ;;
    cupti_*) envs=(GPUSCOPE_CUPTI_ATTRIBUTES="${mode#cupti_}") cmd=("${record[@]}") ;;
    *) echo "slow_mode.sh: unknown mode $mode" >&2; continue ;;
    esac
    rm -f "$OUT/slow.db" "$OUT/samples.json" "$OUT/slow.out"
    env "${envs[@]}" timeout -k 5 "$LIMIT" "${cmd[@]}" "$PY" tests/gpu/models/real_models.py --model "$MODEL" \
      --variant plain --steps 20 --blocks 6 --threads "${extra[@]}" > "$OUT/slow.out" 2> "$OUT/slow.err" &
    job=$!
    # The python process (under timeout, or under timeout and gpuscope record).
    pid=
    for _ in $(seq 200); do
      pid=$(pgrep -n -f "^$PY tests/gpu/models/real_models.py")
      [ -n "$pid" ] && break
      sleep 0.05
    done
    [ -n "$pid" ] && "$PY" bench/models/pc_sampler.py --pid "$pid" --delay 1.5 --seconds 3 -o "$OUT/samples.json" 2>> "$OUT/slow.err"
    wait "$job"
    rc=$?
    line=$(grep '^REAL_MODEL' "$OUT/slow.out" | cut -c12-)
    samples=$(cat "$OUT/samples.json" 2> /dev/null)
    echo "{\"mode\": \"$mode\", \"round\": $round, \"rc\": $rc, \"samples\": ${samples:-null}, \"run\": ${line:-null}}" >> "$OUT/slow_mode.jsonl"
    echo "$mode round $round: rc=$rc $(echo "$line" | grep -o '"blocks_ms": \[[^]]*\]')"
  done
done
rm -f "$OUT/slow.db"
