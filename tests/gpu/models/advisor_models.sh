#!/usr/bin/env bash
# The advisor checked against fixes measured on real models (GPU machine).
#   time:    every fix of every model timed without gpuscope (real_models.py --variant all;
#            TIME_VARIANTS="model:v1,v2 ..." times only those variants of the models it names)
#   record:  the plain variant recorded with gpuscope's default, then analysed (JSON and text);
#            RECORD_MODELS limits this and the next two stages to some of MODELS
#   full:    the same recorded with --full (everything traced), then analysed
#   sampled: the same recorded with --sample 0.5,0.5, then analysed
#   fixes:   the fixed variants in FIX_RECORDS ("model:variant ...") recorded with --full, for calibration
#   profile: torch.profiler traces of tiny_mlp and item_loop (for tests/data)
#   compare: the table of estimates against measured savings (compare.py)
# Results go to $OUT/models (timings.jsonl, <model>.db/.json/.txt, table.md).
#
# Usage (repository root, GPU machine, .carry/ holding bin/gpuscope and the plugin):
#   OUT=/tmp/out MODELS="resnet50 gpt2" STAGES="time record compare" tests/gpu/models/advisor_models.sh
set -uo pipefail
cd "$(dirname "$0")/../../.."
GS=${GPUSCOPE:-$PWD/.carry/bin/gpuscope}
OUT=${OUT:-/tmp/gpuscope_gpu_out}/models
PY=${PYTHON:-python3}
MODELS=${MODELS:-"resnet50 gpt2 tiny_mlp item_loop cpu_dataset transformer healthy sync_loop"}
STAGES=${STAGES:-"time record compare"}
LIMIT=${LIMIT:-150}
RECORD_ARGS=${RECORD_ARGS:-}
mkdir -p "$OUT"
# Timings measured in earlier calls count too (TIMINGS_SEED: a timings.jsonl).
[ -n "${TIMINGS_SEED:-}" ] && [ ! -s "$OUT/timings.jsonl" ] && cp "$TIMINGS_SEED" "$OUT/timings.jsonl"
export PYTHONUNBUFFERED=1
script=tests/gpu/models/real_models.py
# Steps per timed block: enough for a few seconds per variant.
steps_of() { case $1 in cpu_dataset | lightning_cpu) echo 8 ;; gpt2 | healthy) echo 10 ;; *) echo 20 ;; esac; }
# Steps per block when recorded: the control stretch (3 + 8 steps, >= 0.2 s) and enough traced after it.
record_steps_of() { case $1 in tiny_mlp | item_loop | sync_loop) echo 40 ;; *) echo 8 ;; esac; }
# The variants the time stage runs for model $1: all, or TIME_VARIANTS's list for it.
time_variants_of() {
  local mv
  [ -z "${TIME_VARIANTS:-}" ] && { echo all; return; }
  for mv in $TIME_VARIANTS; do [ "${mv%%:*}" = "$1" ] && { echo "${mv#*:}"; return; }; done
}
# KEEP_DB=1 keeps whole recordings; by default only <model>_small.db (tests/gpu/models/trim.py) stays.
KEEP_DB=${KEEP_DB:-0}

for stage in $STAGES; do
  for m in $MODELS; do
    t0=$SECONDS
    case $stage in
    time)
      variants=$(time_variants_of "$m")
      [ -n "$variants" ] || continue
      timeout -k 5 "$LIMIT" "$PY" $script --model "$m" --variant "$variants" --steps "$(steps_of "$m")" 2> "$OUT/$m.time.err" |
        grep --line-buffered '^REAL_MODEL' | tee -a "$OUT/timings.jsonl"
      ;;
    record | full | sampled)
      case " ${RECORD_MODELS:-$MODELS} " in *" $m "*) ;; *) continue ;; esac
      db=$OUT/$m.db flag=$RECORD_ARGS
      [ "$stage" = full ] && db=$OUT/${m}_full.db flag="--full $RECORD_ARGS"
      [ "$stage" = sampled ] && db=$OUT/${m}_sampled.db flag="--sample 0.5,0.5 $RECORD_ARGS"
      timeout -k 10 "$LIMIT" "$GS" record --force $flag -o "$db" -- "$PY" $script --model "$m" --variant plain \
        --steps "$(record_steps_of "$m")" --blocks 4 > "${db%.db}.out" 2> "${db%.db}.err"
      echo "recorded $m ($stage): rc=$? $(grep -h '^REAL_MODEL' "${db%.db}.out" | cut -c1-200)"
      "$GS" analyze "$db" --format json --force -o "${db%.db}.json" 2>> "${db%.db}.err" || tail -2 "${db%.db}.err"
      "$GS" analyze "$db" --force -o "${db%.db}.txt" 2>> "${db%.db}.err"
      rm -f "${db%.db}_small.db"
      "$PY" tests/gpu/models/trim.py "$db" "${db%.db}_small.db" --traced-steps ${TRIM_STEPS:-4}
      [ "$KEEP_DB" = 1 ] || rm -f "$db"
      ;;
    fixes)
      for mv in ${FIX_RECORDS:-}; do
        [ "${mv%%:*}" = "$m" ] || continue
        db=$OUT/${m}_${mv#*:}.db
        timeout -k 10 "$LIMIT" "$GS" record --force --full -o "$db" -- "$PY" $script --model "$m" \
          --variant "${mv#*:}" --steps "$(steps_of "$m")" --blocks 2 > "${db%.db}.out" 2> "${db%.db}.err"
        echo "recorded $mv: rc=$? $(grep -h '^REAL_MODEL' "${db%.db}.out" | cut -c1-200)"
        "$GS" analyze "$db" --format json --force -o "${db%.db}.json" 2>> "${db%.db}.err" || tail -2 "${db%.db}.err"
        [ "$KEEP_DB" = 1 ] || rm -f "$db"
      done
      ;;
    profile)
      case $m in tiny_mlp | item_loop | sync_loop) ;; *) continue ;; esac
      timeout -k 5 "$LIMIT" "$PY" $script --model "$m" --steps 5 --profile "$OUT/${m}_torch_profiler.json" &&
        gzip -f "$OUT/${m}_torch_profiler.json"
      ;;
    overhead)
      # Tracing cost (issue 18): OVERHEAD_MODES of the plain variant, alternated, each
      # round starting one mode later; OVERHEAD_ARGS go to real_models.py (--threads).
      case " ${OVERHEAD_MODELS:-resnet50 item_loop} " in *" $m "*) ;; *) continue ;; esac
      read -r -a modes <<< "${OVERHEAD_MODES:-plain default torch_profiler}"
      for round in $(seq "${OVERHEAD_ROUNDS:-1}"); do
        for i in "${!modes[@]}"; do
          mode=${modes[$(((i + round - 1) % ${#modes[@]}))]}
          # A mode is the plain run (nothing), torch.profiler, or gpuscope record with
          # some options and environment; the ablations take one source or feature
          # out, and the recording's traced/untraced measure gives its cost inside the process.
          extra=() flags=() envs=() traced=1
          case $mode in
          plain) traced=0 ;;
          torch_profiler) traced=0 extra=(--torch-profiler) ;;
          default) ;;
          full) flags=(--full) ;;
          full_noops) flags=(--full) envs=(GPUSCOPE_TORCH_OPS=0) ;;
          default_noops) envs=(GPUSCOPE_TORCH_OPS=0) ;;
          no_memory) envs=(GPUSCOPE_TORCH_MEMORY=0) ;;
          no_shapes) envs=(GPUSCOPE_TORCH_SHAPES=0) ;;
          no_api) envs=(GPUSCOPE_RUNTIME_API=0 GPUSCOPE_DRIVER_API=0) ;;
          no_driver_api) envs=(GPUSCOPE_DRIVER_API=0) ;;
          no_flush) envs=(GPUSCOPE_PERIODIC_FLUSH=0) ;;
          # CUPTI's kernel timestamps in pinned host memory instead of device memory.
          cupti_pinned) envs=(GPUSCOPE_CUPTI_ATTRIBUTES=8=1) ;;
          fetch_ops) envs=(GPUSCOPE_TORCH_DATALOADER_OPS=1) ;;
          ops_every_step) envs=(GPUSCOPE_TORCH_OP_STEPS=0) ;;
          # CUPTI alone (no plugin, so no untraced control steps); then CUPTI's activity
          # records without API records or ops, the plugin left to find steps: the least a
          # recording of every kernel costs, measured inside the process too.
          cuda_only) flags=(--trace cuda) ;;
          cupti_floor) envs=(GPUSCOPE_RUNTIME_API=0 GPUSCOPE_DRIVER_API=0 GPUSCOPE_TORCH_OPS=0) ;;
          sampled) flags=(--sample "${OVERHEAD_SAMPLE:-0.2,0.8}") ;;
          # The default plus CUPTI's records of its own overhead (what they cost, and what
          # they say a slow process spends on buffer flushes, command-buffer waits, ...).
          overhead_records) flags=(--trace cuda,nvtx,torch,overhead) ;;
          # Only steps 20-27 traced (`record --steps`): what the rest of a job pays outside the window.
          steps_window) flags=(--steps "${OVERHEAD_STEPS:-20-27}") ;;
          *) echo "advisor_models.sh: unknown overhead mode $mode" >&2; continue ;;
          esac
          cmd=()
          rm -f "$OUT/ovh.db" "$OUT/ovh.json"
          [ "$traced" = 1 ] && cmd=(env "${envs[@]}" "$GS" record --force "${flags[@]}" -o "$OUT/ovh.db" --)
          line=$(timeout -k 5 "$LIMIT" "${cmd[@]}" "$PY" $script --model "$m" --variant plain \
            --steps "$(record_steps_of "$m")" --blocks 4 "${extra[@]}" ${OVERHEAD_ARGS:-} 2>/dev/null | grep '^REAL_MODEL' | cut -c12-)
          # The recording's own measure: traced against untraced steps of that process.
          untraced=null
          if [ "$traced" = 1 ] && "$GS" analyze "$OUT/ovh.db" --format json --force -o "$OUT/ovh.json" 2>/dev/null; then
            # With the GPU busy time per traced step: is a slow recording slow on the GPU or the CPU?
            untraced=$("$PY" -c 'import json,sys; s = json.load(open(sys.argv[1]))["summary"]; u = s.get("untraced") or {}
u["gpu_ms_per_step"] = round(sum(d["busy_ms"] for d in s["devices"]) / max(s["steps"], 1), 3)
if s.get("tracer_overhead"): u["tracer_overhead"] = s["tracer_overhead"]
print(json.dumps(u))' "$OUT/ovh.json")
            # What the ops cover (kernel time linked to an op, ops placed by position).
            untraced=$("$PY" -c 'import json,sys; u = json.loads(sys.argv[1]); u.update(json.loads(sys.argv[2])); print(json.dumps(u))' \
              "$untraced" "$("$PY" bench/models/op_coverage.py "$OUT/ovh.db")")
            # Each kind of step against the untraced ones: kernels only, ops recorded, the resume.
            merged=$("$PY" -c 'import json,sys; u = json.loads(sys.argv[1]); k = json.loads(sys.argv[2])[0]
u.update({x: k[x] for x in k if x.endswith("_pct")}); print(json.dumps(u))' \
              "$untraced" "$("$PY" bench/models/steps_by_kind.py --gpuscope "$GS" --json "$OUT/ovh.db")") &&
              untraced=$merged
          fi
          echo "{\"overhead\": \"$mode\", \"round\": $round, \"run\": ${line:-null}, \"untraced\": $untraced}" |
            tee -a "$OUT/overhead.jsonl"
        done
      done
      rm -f "$OUT/ovh.db" "$OUT/ovh.json"
      ;;
    compare) break ;;
    esac
    echo "=== $stage $m: $((SECONDS - t0)) s"
  done
  if [ "$stage" = compare ]; then
    "$PY" tests/gpu/models/compare.py "$OUT" | tee "$OUT/table.md"
  fi
done
