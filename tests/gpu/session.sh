#!/usr/bin/env bash
# One device call: runs the named steps in order inside BUDGET seconds (each
# step gets what is left, less RESERVE for packing), then packs everything
# under $OUT into $OUT/results.tgz, because the device returns at most 8 files.
# A step that would start with less than MIN_STEP seconds left is skipped and
# says so.
#
# Steps: any run_all.sh stage (plugin, known_work, compare_cb, compare_mlp,
# nvml, multi_proc, recordings, overhead), bisect, plugin_check, doctor, package,
# setup (the archive's `gpuscope setup torch`: the torch plugin into the user's cache),
# advisor:RULE[,RULE...], diff, injection, models (tests/gpu/models/advisor_models.sh:
# MODELS, STAGES), slow_mode (bench/models/slow_mode.sh: MODES, ROUNDS), dataloader_ops
# (bench/torch_plugin/dataloader_ops.py on the GPU: DL_ROUNDS), op_steps
# (bench/torch_plugin/op_steps.py on the GPU: OS_ROUNDS), machine (clock source, CPU),
# ddp (tests/gpu/ddp_check.py, 2 GPUs: DDP_ARGS), export_consumers (tests/gpu/export_consumers.py:
# HTA idle and TensorBoard GPU utilization of `export --steps analysed` against analyze; EC_ARGS),
# job_end (tests/plugins/torch/check_job_end.py with the loop on the GPU: JOB_END_CASES),
# on_demand (bench/collector/on_demand_cost.py, MLP then ResNet-50: OD_MODELS, OD_MLP_ARGS,
# OD_RESNET50_ARGS, OD_ARGS), try_models (tests/gpu/try_check.py: TRY_MODELS), stream_wait (a
# two-stream recording for tests/data).
# Usage (GPU machine, repository root): BUDGET=560 tests/gpu/session.sh STEP...
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-/tmp/gpuscope_gpu_out}
BUDGET=${BUDGET:-560}
RESERVE=${RESERVE:-15}
MIN_STEP=${MIN_STEP:-30}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT/r"
t0=$SECONDS
# The release archive is what travels (the device takes 64 MiB in all): its
# gpuscope and collector become .carry/bin and .carry/lib, where the steps look.
archive=$(ls .carry/gpuscope-*-linux-x86_64.tar.gz 2>/dev/null)
archive=${archive%%$'\n'*}
if [ -n "$archive" ]; then
  mkdir -p .carry/bin .carry/lib
  unpacked=$(mktemp -d /tmp/gpuscope_release.XXXXXX)
  tar -xzf "$archive" -C "$unpacked" && top=$(ls -d "$unpacked"/gpuscope-*) &&
    cp "$top"/bin/gpuscope* .carry/bin/ && cp "$top"/lib/gpuscope/libgpuscope_collector.so .carry/lib/ &&
    rm -rf .carry/share && cp -r "$top"/share .carry/ &&  # gpuscope try's Python hook (share/gpuscope/try)
    echo "=== .carry/bin and .carry/lib from $archive"
fi

for step in "$@"; do
  left=$((BUDGET - RESERVE - (SECONDS - t0)))
  if [ $left -lt "$MIN_STEP" ]; then
    echo "=== SKIPPED $step: ${left}s left"
    continue
  fi
  echo "=== step $step (${left}s left, $(date +%T))"
  case $step in
  bisect) OUT=$OUT/r LIMIT=35 timeout -k 5 $left bash tests/gpu/bisect.sh ;;
  plugin_check)
    GPU_CHECK_ARGS="--cases mlp_cuda_workers2_fork,mlp_under_torch_profiler,libtorch_trainer_cuda,plugin_for_other_torch --no-bench" \
      DEBIAN_PLUGIN=$PWD/.carry/debian/libgpuscope_torch.so timeout -k 5 $left bash bench/torch_plugin/gpu_check.sh .carry python3 "$OUT/r/plugin_check" ;;
  advisor:*)
    GPUSCOPE=$PWD/.carry/bin/gpuscope OUT=$OUT/r/advisor LIMIT=${ADVISOR_LIMIT:-90} timeout -k 5 $left \
      bash tests/gpu/advisor_check.sh $(r=${step#advisor:}; [ "$r" = all ] || echo "${r//,/ }")
    ;;
  models) OUT=$OUT/r LIMIT=${MODELS_LIMIT:-150} timeout -k 5 $left bash tests/gpu/models/advisor_models.sh ;;
  doctor)
    mkdir -p "$OUT/r/doctor"
    timeout -k 5 $left .carry/bin/gpuscope doctor --python python3 > "$OUT/r/doctor/doctor.txt" 2>&1
    echo "doctor rc=$?" | tee -a "$OUT/r/doctor/doctor.txt"; cat "$OUT/r/doctor/doctor.txt" ;;
  package) OUT=$OUT/r timeout -k 5 $left bash tests/gpu/package_check.sh ;;
  slow_mode) OUT=$OUT/r/slow_mode timeout -k 5 $left bash bench/models/slow_mode.sh ;;
  dataloader_ops)
    timeout -k 5 $left python3 bench/torch_plugin/dataloader_ops.py --gpuscope "${top:-$PWD/.carry}"/bin/gpuscope \
      --python python3 --device cuda --rounds "${DL_ROUNDS:-5}" --json | tee "$OUT/r/dataloader_ops.json" ;;
  op_steps)
    timeout -k 5 $left python3 bench/torch_plugin/op_steps.py --gpuscope "${top:-$PWD/.carry}"/bin/gpuscope \
      --python python3 --device cuda --rounds "${OS_ROUNDS:-5}" --json | tee "$OUT/r/op_steps.json" ;;
  setup) timeout -k 5 $left "${top:-.carry}"/bin/gpuscope setup torch --python "$(command -v python3)" ;;
  machine)
    # What the recording's clock reads through (CUPTI asks it twice per API record) and the CPU.
    { echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
      echo "cpus: $(nproc); $(grep -m1 'model name' /proc/cpuinfo)"
      # Which vCPUs share a core (a tracer's threads beside the job's on a sibling slow it).
      echo "core siblings: $(cat /sys/devices/system/cpu/cpu*/topology/thread_siblings_list 2>/dev/null | sort -u | tr '\n' ' ')"
      lscpu 2>/dev/null | grep -E '^(Thread|Core|Socket|NUMA node\(s\)|L3|Hypervisor)'
      python3 -c 'import time; n = 200000; t = time.perf_counter(); [time.monotonic_ns() for _ in range(n)]; print("monotonic_ns from python: %.0f ns a call" % ((time.perf_counter() - t) / n * 1e9))'
    } | tee "$OUT/r/machine.txt" ;;
  ddp)
    # Issue 20 on nvidia-h200-x2: a 2-rank NCCL DDP job recorded full, sampled and with a straggler,
    # NCCL overlap against HTA, tracing cost, a small recording kept (tests/gpu/ddp_check.py; DDP_ARGS).
    timeout -k 5 $left python3 tests/gpu/ddp_check.py --gpuscope "$PWD/.carry/bin/gpuscope" --out "$OUT/r/ddp" ${DDP_ARGS:-} ;;
  export_consumers)
    timeout -k 5 $left python3 tests/gpu/export_consumers.py --gpuscope "$PWD/.carry/bin/gpuscope" --python python3 \
      --out "$OUT/r/export_consumers" ${EC_ARGS:-} ;;
  job_end)
    # Issue 39 on real CUPTI: the GPU loop of check_job_end.py stopped by SIGINT/SIGKILL after 5 s
    # (its steps after the control stretch analysed), and a job that raises reported as failed.
    mkdir -p "$OUT/r/job_end"
    for c in ${JOB_END_CASES:-stopped_sigint_group stopped_sigint_gpuscope stopped_sigkill_job job_fails}; do
      JOB_END_DEVICE=cuda timeout -k 5 $left python3 tests/plugins/torch/check_job_end.py "$c" \
        --gpuscope "$PWD/.carry/bin/gpuscope" --python python3 --samples samples --trainer none \
        --mismatch-plugin none 2>&1 | tee -a "$OUT/r/job_end/log.txt"
      echo "job_end $c: rc=${PIPESTATUS[0]}" | tee -a "$OUT/r/job_end/log.txt"
    done ;;
  on_demand)
    # Issues 40 and 51 (bench/collector/on_demand_cost.py): dormant cost, the steps after a capture
    # (1, 2, 3-50, 51-end), a job with one 20-step capture, trigger latency in steps, and each capture
    # file's collector_stat (did CUPTI's teardown happen: cupti_state, finalizes, failures, deferred).
    # Per model (OD_MODELS, default "mlp resnet50"): its own time share, results written after every
    # pair to $OUT/r/on_demand/MODEL.json, the first capture file kept. Step counts fit ~6 min on an
    # H100 with torch's ~7 s start per process: MLP 3 pairs, 200 dormant steps, a 1000-step job;
    # ResNet-50 2 pairs, 100 dormant steps, a 300-step job (not 1000). OD_MLP_ARGS, OD_RESNET50_ARGS
    # replace those; OD_ARGS is added to both. Not by default: mlp_noplugin, the MLP with the torch
    # plugin's ops and memory off (1 pair), which tells the plugin's share from CUPTI's.
    mkdir -p "$OUT/r/on_demand"
    od_models=(${OD_MODELS:-mlp resnet50})
    for i in "${!od_models[@]}"; do
      m=${od_models[$i]}
      od_left=$((BUDGET - RESERVE - (SECONDS - t0)))
      share=$((od_left / (${#od_models[@]} - i)))  # what is left, shared by the models still to run
      model=$m od_env=
      case $m in
      mlp) margs=${OD_MLP_ARGS:---pairs 3 --steps 200 --total 1000} ;;
      resnet50) margs=${OD_RESNET50_ARGS:---pairs 2 --steps 100 --total 300} ;;
      mlp_noplugin) model=mlp margs="--pairs 1 --steps 200 --total 600" od_env="GPUSCOPE_TORCH_OPS=0 GPUSCOPE_TORCH_MEMORY=0" ;;
      *) margs= ;;
      esac
      mkdir -p "$OUT/r/on_demand/$m.work"
      echo "--- on_demand $m: $margs ${OD_ARGS:-} $od_env (${share}s)"
      env $od_env timeout -k 5 $share python3 bench/collector/on_demand_cost.py --gpuscope "$PWD/.carry/bin/gpuscope" \
        --python python3 --device cuda --model "$model" $margs ${OD_ARGS:-} --work "$OUT/r/on_demand/$m.work" \
        --json "$OUT/r/on_demand/$m.json" > "$OUT/r/on_demand/$m.log" 2>&1
      echo "on_demand $m: rc=$?"
      grep -E '^(on_demand_cost|SUMMARY)' "$OUT/r/on_demand/$m.log" | cut -c1-400
      if ! grep -q '^SUMMARY' "$OUT/r/on_demand/$m.log" && [ -s "$OUT/r/on_demand/$m.json" ]; then
        echo "(cut short: the pairs done so far)"
        python3 bench/collector/on_demand_cost.py --gpuscope - --summary-of "$OUT/r/on_demand/$m.json" | cut -c1-400
      fi
      tail -5 "$OUT/r/on_demand/$m.log" | grep -vE '^(on_demand_cost|SUMMARY|ON_DEMAND_COST)' | cut -c1-400
      # The captures' collector_stat is in the JSON; one capture file kept for a closer look.
      find "$OUT/r/on_demand/$m.work" -name 'capture_*.db*' ! -name 'capture_0.db' -delete
      find "$OUT/r/on_demand/$m.work" -name 'tmp*.json' -delete
    done ;;
  try_models)
    # Issue 48: `gpuscope try --from` each model's recording against the same fixes timed by hand
    # (TRY_MODELS, default the five not yet run on a GPU; ~60-150 s a model, BERT's compile slow).
    mkdir -p "$OUT/r/try"
    timeout -k 5 $left python3 tests/gpu/try_check.py --gpuscope .carry/bin/gpuscope --budget $((left - 10)) \
      --models "${TRY_MODELS:-vit_b16,convnext_tiny,t5_small,resnet50_gn,bert}" --out "$OUT/r/try" 2>&1 | tail -40 ;;
  stream_wait)
    # Issue 50: a real recording with a stream wait (two streams, copies overlapping compute) for
    # tests/data: the flow arrow from the waited-for work to the waiting kernel is checked in CI.
    mkdir -p "$OUT/r/stream_wait"
    timeout -k 5 $left .carry/bin/gpuscope record -o "$OUT/r/stream_wait/copy_overlap_fixed_gpu.db" -- \
      python3 samples/advisor/copy-overlap.py --steps 12 --fixed > "$OUT/r/stream_wait/record.log" 2>&1
    echo "stream_wait: rc=$?"; tail -3 "$OUT/r/stream_wait/record.log"
    .carry/bin/gpuscope info "$OUT/r/stream_wait/copy_overlap_fixed_gpu.db" 2>&1 | head -20
    sqlite3 "$OUT/r/stream_wait/copy_overlap_fixed_gpu.db" "SELECT type, count(*) FROM sync GROUP BY type" 2>&1 | head
    zstd -q --rm -19 "$OUT/r/stream_wait/copy_overlap_fixed_gpu.db" 2>/dev/null || true ;;
  injection) OUT=$OUT/r/injection timeout -k 5 $left bash tests/gpu/injection_check.sh ;;
  diff) OUT=$OUT/r/diff GS=$PWD/.carry/bin/gpuscope timeout -k 5 $left bash tests/gpu/diff_check.sh ;;
  # Kept under r/ too: the call's output comes back only in its last 12 000 characters.
  *) OUT=$OUT/r timeout -k 5 $left bash tests/gpu/run_all.sh "$step" 2>&1 | tee "$OUT/r/$step.log"; (exit "${PIPESTATUS[0]}") ;;
  esac
  echo "=== step $step: rc=$? after $((SECONDS - t0))s"
done

# The device returns files of at most 16 MiB: a larger archive comes back in parts
# (cat results.tgz.* > results.tgz).
tar -czf "$OUT/results.tgz" -C "$OUT" r && rm -rf "$OUT/r"
if [ "$(stat -c %s "$OUT/results.tgz")" -gt 15000000 ]; then
  split -b 15000000 -d -a 1 "$OUT/results.tgz" "$OUT/results.tgz." && rm "$OUT/results.tgz"
fi
ls -la "$OUT"
