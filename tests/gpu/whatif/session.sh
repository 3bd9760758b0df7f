#!/usr/bin/env bash
# One device call of the what-if ground truth (tests/gpu/whatif/README.md), in
# BUDGET seconds:
#   1. CALIBRATE=1: bench/whatif/calibrate.py --out $OUT/r/calibration.json (timeout 100; skipped if absent)
#   2. recordings: gpuscope (from the release archive .carry/gpuscope-*-linux-x86_64.tar.gz,
#      with `gpuscope setup torch` first) records each of RECORD_MODELS's plain variant
#      RECORDINGS times (record_models.py), leaving TIME_RESERVE seconds for step 3
#   3. time_fixes.py for MODELS with the time left (--deadline: no model starts that cannot end in it)
# Everything goes under $OUT/r, packed at the end into $OUT/results.tgz (in 15 MB
# parts if larger: cat results.tgz.* > results.tgz).
# Env: BUDGET (540), MODELS, RECORD_MODELS (= MODELS), RECORDINGS (1), CALIBRATE (0),
#      MODEL_SECONDS (75, per model in time_fixes), TIME_ARGS (more time_fixes arguments),
#      REC_TIMEOUT (60 per recording), REC_MAX_MB (50: compressed recordings kept in all,
#      as the device returns 64 MiB), RECORD_ARGS (more `gpuscope record` arguments),
#      TIME_RESERVE (90 when MODELS is set: seconds the recordings leave), RESERVE (20: packing).
# Usage (GPU machine, repository root):
#   MODELS="resnet50 bert" BUDGET=540 bash tests/gpu/whatif/session.sh > $OUT/log.txt 2>&1
set -uo pipefail
cd "$(dirname "$0")/../../.."
export OUT=${OUT:-/tmp/gpuscope_gpu_out}
export PYTHONUNBUFFERED=1
BUDGET=${BUDGET:-540}
RESERVE=${RESERVE:-20}
MODELS=${MODELS:-}
RECORD_MODELS=${RECORD_MODELS-$MODELS}
RECORDINGS=${RECORDINGS:-1}
CALIBRATE=${CALIBRATE:-0}
MODEL_SECONDS=${MODEL_SECONDS:-75}
REC_TIMEOUT=${REC_TIMEOUT:-60}
if [ -n "$MODELS" ]; then TIME_RESERVE=${TIME_RESERVE:-90}; else TIME_RESERVE=${TIME_RESERVE:-0}; fi
R=$OUT/r
mkdir -p "$R"
start=$(date +%s)
end=$((start + BUDGET - RESERVE))
say() { echo "[$(date +%T) +$(($(date +%s) - start))s] $*"; }
left() { echo $((end - $(date +%s))); }
comma() { echo "$*" | tr -s ' ' ',' | sed 's/^,//; s/,$//'; }

say "whatif session: BUDGET=$BUDGET MODELS='$MODELS' RECORD_MODELS='$RECORD_MODELS' RECORDINGS=$RECORDINGS CALIBRATE=$CALIBRATE"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv 2>&1 | tee "$R/gpu.txt"
python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)' 2>&1 | tee -a "$R/gpu.txt"

# 1. Calibration (written by someone else; may be absent).
if [ "$CALIBRATE" = 1 ]; then
  if [ -f bench/whatif/calibrate.py ]; then
    say "calibration"
    timeout -k 5 100 python3 bench/whatif/calibrate.py --out "$R/calibration.json" 2>&1 | tee "$R/calibration.log"
    say "calibration rc=${PIPESTATUS[0]}"
  else
    say "calibration SKIPPED: bench/whatif/calibrate.py is absent" | tee "$R/calibration.log"
  fi
fi

# 2. Recordings of the plain variants.
if [ -n "$RECORD_MODELS" ]; then
  GS=
  archive=$(ls .carry/gpuscope-*-linux-x86_64.tar.gz 2>/dev/null)
  archive=${archive%%$'\n'*}
  if [ -n "$archive" ]; then
    unpacked=$(mktemp -d /tmp/gpuscope_release.XXXXXX)
    if tar -xzf "$archive" -C "$unpacked" && top=$(ls -d "$unpacked"/gpuscope-*); then
      GS=$top/bin/gpuscope
      # A torch plugin built by an earlier call (its $OUT/r/gpuscope_cache, carried back
      # as .carry/gpuscope_cache) saves setup's ~50 s build.
      if [ -d .carry/gpuscope_cache ]; then mkdir -p ~/.cache && cp -r .carry/gpuscope_cache ~/.cache/gpuscope; fi
      say "gpuscope from $archive; setup torch"
      timeout -k 5 150 "$GS" setup torch --python "$(command -v python3)" 2>&1 | tail -20 | tee "$R/setup.log"
      say "setup rc=${PIPESTATUS[0]}"
      for so in ~/.cache/gpuscope/torch/*/libgpuscope_torch.so; do
        [ -f "$so" ] && v=$(basename "$(dirname "$so")") && mkdir -p "$R/gpuscope_cache/torch/$v" && cp "$so" "$R/gpuscope_cache/torch/$v/"
      done
    fi
  elif [ -x .carry/bin/gpuscope ]; then
    GS=$PWD/.carry/bin/gpuscope
    say "no release archive: $GS (its torch plugin as carried)"
  fi
  if [ -n "$GS" ]; then
    say "recordings: $RECORD_MODELS x $RECORDINGS ($(left)s left, ${TIME_RESERVE}s kept for timing)"
    python3 tests/gpu/whatif/record_models.py --models "$(comma $RECORD_MODELS)" --recordings "$RECORDINGS" \
      --gpuscope "$GS" --outdir "$R/rec" --timeout "$REC_TIMEOUT" --deadline $((end - TIME_RESERVE)) \
      --record-args "${RECORD_ARGS:-}" --max-total-mb "${REC_MAX_MB:-50}"
    say "recordings rc=$?"
  else
    say "recordings SKIPPED: no .carry/gpuscope-*-linux-x86_64.tar.gz and no .carry/bin/gpuscope"
  fi
fi

# 3. Every fix timed without a profiler, alternated in one process per model list.
if [ -n "$MODELS" ]; then
  l=$(left)
  if [ "$l" -lt 40 ]; then
    say "time_fixes SKIPPED: ${l}s left"
  else
    say "time_fixes: $MODELS (${l}s left), each model in its own process, cuda-graphs variants in theirs"
    for m in $MODELS; do
      l=$(left); [ "$l" -lt 30 ] && { say "time_fixes $m SKIPPED: ${l}s left"; continue; }
      timeout -k 5 "$l" python3 tests/gpu/whatif/time_fixes.py --models "$m" --graphs no --out "$R/timings.jsonl" \
        --model-seconds "$MODEL_SECONDS" --deadline "$end" ${TIME_ARGS:-} 2>&1 | tee -a "$R/time_fixes.log" | grep -E "ms  \(|FAIL|SKIP|ERROR" | cut -c1-160
      for v in $(python3 tests/gpu/whatif/time_fixes.py --graph-variants "$m"); do
        l=$(left); [ "$l" -lt 25 ] && { say "time_fixes $m $v SKIPPED: ${l}s left"; continue; }
        timeout -k 5 "$l" python3 tests/gpu/whatif/time_fixes.py --models "$m" --only "$v" --out "$R/timings_graphs.jsonl" \
          --model-seconds 40 --deadline "$end" ${TIME_ARGS:-} 2>&1 | tee -a "$R/time_fixes.log" | grep -E "ms  \(|FAIL|SKIP|ERROR" | cut -c1-160
      done
    done
    say "time_fixes done"
  fi
fi

# The device returns files of at most 16 MiB.
say "packing"
tar -czf "$OUT/results.tgz" -C "$OUT" r && rm -rf "$R"
if [ "$(stat -c %s "$OUT/results.tgz")" -gt 15000000 ]; then
  split -b 15000000 -d -a 1 "$OUT/results.tgz" "$OUT/results.tgz." && rm "$OUT/results.tgz"
fi
ls -la "$OUT"
say "done"
