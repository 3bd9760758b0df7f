#!/usr/bin/env bash
# Everything that needs the GPU machine, in one run. Expects the CPU-built
# binaries in .carry/ (bin/gpuscope, bin/known_work, bin/nvtx_loop,
# lib/libgpuscope_collector.so) and writes logs and small recordings to $OUT.
# Usage (on the GPU machine): OUT=/some/dir tests/gpu/run_all.sh [stage...]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gpuscope_gpu_out}
W=/tmp/gpuscope_gpu_work
mkdir -p "$OUT" "$W"
GS=$PWD/.carry/bin/gpuscope
# bisect.sh leaves the configuration that did not hang; without it, the default.
[ -f "$OUT/safe.env" ] && . "$OUT/safe.env"
REC_TRACE=${REC_TRACE:-cuda,nvtx,torch}
export PYTHONUNBUFFERED=1
stages=${*:-"env plugin known_work profiler_compare multi_proc recordings overhead"}
export GPUSCOPE_CRASH_TRACE=1
log() { echo "=== $* ($(date +%T))"; }
# The folder of the libcupti that torch's wheel brings, else the toolkit's (CUDA_INJECTION64_PATH tools need it).
cupti_dir() {
  dirname "$(python3 -c 'import glob,site; print((glob.glob(site.getsitepackages()[0] + "/nvidia/cu13/lib/libcupti.so*") + ["/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcupti.so.13"])[0])')"
}
. tests/gpu/hang.sh

# guard SECONDS cmd...: runs cmd; if it outlives SECONDS, prints the stacks of
# its process tree (cuda-gdb) and kills it, so one hang cannot eat the session.
guard() {
  local t=$1; shift
  "$@" &
  local pid=$! waited=0
  while kill -0 $pid 2>/dev/null && [ $waited -lt $t ]; do sleep 1; waited=$((waited + 1)); done
  if kill -0 $pid 2>/dev/null; then
    echo "HANG: still running after ${t}s: $*"
    show_hang $pid gdb
    kill -9 $pid $(pgrep -P $pid) 2>/dev/null
  fi
  wait $pid
}

for stage in $stages; do
case $stage in
env)
  log env
  nvidia-smi -L; python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
  ;;
plugin)
  # The torch plugin must match this machine's torch: build it here once and
  # put it next to the collector, where the collector looks for it.
  log plugin
  if [ ! -f .carry/lib/libgpuscope_torch.so.torch ] ||
     [ "$(cat .carry/lib/libgpuscope_torch.so.torch)" != "$(python3 -c 'import torch; print(torch.__version__)')" ]; then
    BUILD_ONLY=1 bash bench/torch_plugin/gpu_check.sh .carry python3 "$W/plugin" 2>&1 | tail -5
    mkdir -p "$OUT/gpu_build"
    for f in libgpuscope_torch.so libtorch_trainer callback_cost; do
      strip -o "$OUT/gpu_build/$f" /tmp/gpuscope_plugin_build/build/$f
    done
    # A failed build must not pass for a plugin of this torch in the next stages.
    if [ -s "$OUT/gpu_build/libgpuscope_torch.so" ]; then
      python3 -c 'import torch; print(torch.__version__)' > "$OUT/gpu_build/libgpuscope_torch.so.torch"
    else
      echo "PLUGIN BUILD FAILED: torch ops will not be recorded"
      rm -f .carry/lib/libgpuscope_torch.so .carry/lib/libgpuscope_torch.so.torch
    fi
  else
    mkdir -p "$OUT/gpu_build"
  fi
  cp -f "$OUT"/gpu_build/libgpuscope_torch.so* .carry/lib/ 2>/dev/null
  ls -la .carry/lib
  ;;
known_work)
  log known_work
  guard 60 $GS record --force --trace $REC_TRACE -o "$W/known_work.db" -- .carry/bin/known_work --expect "$W/known_work.json"
  echo "record rc=$?"
  python3 tests/gpu/check_known_work.py "$W/known_work.db" "$W/known_work.json"; echo "check rc=$?"
  cp "$W/known_work.db" "$OUT/"
  ;;
profiler_compare|compare_cb)
  log profiler_compare compute_bound
  # torch.profiler traces every step: so does --full here (no control stretch), with
  # ops in 2 steps of every 50 as by default and the rest placed by position.
  guard 120 env GPUSCOPE_TORCH_OP_STEPS=auto $GS record --force --full --trace $REC_TRACE -o "$W/cb.db" -- python3 samples/torch/compute_bound.py --steps 20 2>&1 | grep -v "^GPUSCOPE_SAMPLE" 
  python3 samples/torch/compute_bound.py --steps 20 --profile "$W/cb_prof.json" | tail -1
  python3 tests/gpu/compare_profiler.py "$W/cb.db" "$W/cb_prof.json"; echo "compare rc=$?"
  ;;&
profiler_compare|compare_mlp)
  log profiler_compare train_mlp
  # 0.1 ms per item in the Dataset: the DataLoader share is large enough to compare.
  mlp_args="--steps 20 --sleep-ms 0.1"
  guard 120 env GPUSCOPE_TORCH_OP_STEPS=auto $GS record --force --full --trace $REC_TRACE -o "$W/mlp.db" -- python3 samples/torch/train_mlp.py $mlp_args > "$W/mlp.out"
  rc=$?; echo "record rc=$rc"; tail -n $([ $rc = 0 ] && echo 2 || echo 80) "$W/mlp.out"
  python3 samples/torch/train_mlp.py $mlp_args --profile "$W/mlp_prof.json" | tail -1
  python3 tests/gpu/compare_profiler.py "$W/mlp.db" "$W/mlp_prof.json"; echo "compare rc=$?"
  python3 tests/gpu/compare_links.py "$W/mlp.db" "$W/mlp_prof.json" "$W/mlp.out"; echo "links rc=$?"
  cp "$W/mlp.db" "$W/mlp.out" "$OUT/" && gzip -c "$W/mlp_prof.json" > "$OUT/mlp_prof.json.gz"
  $GS info "$W/mlp.db" | tail -25
  sqlite3 "$W/mlp.db" "select key, value from collector_stat" 2>/dev/null || python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select key, value from collector_stat').fetchall())" "$W/mlp.db"
  ;;
nvml)
  # NVML is sampled by `gpuscope record` itself; the job must run as without it.
  log nvml
  guard 90 $GS record --force --trace $REC_TRACE,nvml -o "$W/nvml.db" -- python3 samples/torch/train_mlp.py --steps 200 > "$W/nvml.out" 2>&1
  echo "record rc=$?"; grep -v GPUSCOPE_SAMPLE "$W/nvml.out" | tail -3
  python3 - "$W/nvml.db" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
rows = con.execute("select s.value, c.device, count(*), min(c.value), max(c.value), min(c.ts), max(c.ts) from counter c "
                   "join string s on s.id = c.name_id where s.value like 'nvml%' group by 1, 2").fetchall()
devices = [r[0] for r in con.execute("select id from device")]
kernels = con.execute("select count(*), min(start), max(\"end\") from kernel").fetchone()
for r in rows: print("  ", r)
print("devices", devices, "kernels (count, first, last)", kernels)
per_s = max((r[2] / max((r[6] - r[5]) / 1e9, 1e-9) for r in rows), default=0)
ok = rows and all(r[1] in devices for r in rows) and kernels[0] > 0 and 7 <= per_s <= 11
print("ok  " if ok else "FAIL", f"NVML samples on CUDA devices {sorted({r[1] for r in rows})}, {per_s:.1f} per second per counter")
PY
  ;;
variable_shapes)
  # Ops by position on a job whose shapes change every step: the plugin must go to every step.
  log variable_shapes
  guard 120 $GS record --force --trace $REC_TRACE -o "$W/varshapes.db" -- python3 tests/gpu/variable_shapes.py train --steps 80 2>&1 | tail -3
  python3 tests/gpu/variable_shapes.py check "$W/varshapes.db"; echo "check rc=$?"
  ;;
multi_proc)
  log multi_proc
  guard 120 $GS record --force --trace $REC_TRACE -o "$W/mp.db" -- python3 samples/torch/multi_proc.py 2>&1 | grep -v "^GPUSCOPE_SAMPLE" 
  python3 - "$W/mp.db" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
rows = con.execute("select p.pid, p.cupti_status, (select count(*) from kernel k where k.pid=p.pid) from process p").fetchall()
print("processes:", rows)
gpu = [r for r in rows if r[2] > 0]
print("ok  " if len(gpu) >= 2 else "FAIL", f"{len(gpu)} processes with kernels in one database")
PY
  ;;
recordings)
  log recordings
  guard 120 $GS record --force --trace $REC_TRACE -o "$OUT/mlp_h200.db" -- python3 samples/torch/train_mlp.py --steps 10 2>&1 | grep -v "^GPUSCOPE_SAMPLE" 
  python3 samples/torch/train_mlp.py --steps 5 --profile "$W/tp.json" | tail -1 && gzip -c "$W/tp.json" > "$OUT/torch_profiler_mlp.json.gz"
  guard 120 $GS record --force --trace $REC_TRACE -o "$W/cupti_taken.db" -- python3 samples/torch/train_mlp.py --steps 5 --profile "$W/tp2.json" 2>&1 | tail -4
  echo "cupti-taken run rc=${PIPESTATUS[0]}"
  ls -la "$OUT"
  ;;
overhead)
  # ROUNDS (3), OVERHEAD_MEMORY=0 (no memory variant), OVERHEAD_EXTRA="name=words" (one more
  # variant, e.g. no_driver=GPUSCOPE_DRIVER_API=0).
  log overhead
  python3 bench/overhead.py --gpuscope "$GS" --rounds ${ROUNDS:-3} --out "$OUT/overhead.json" \
    --variant gpuscope= --variant "gpuscope_no_torch=--trace cuda,nvtx" \
    $([ "${OVERHEAD_MEMORY:-1}" = 1 ] && echo --variant=gpuscope_memory=--trace=cuda,nvtx,torch,memory) \
    ${OVERHEAD_EXTRA:+--variant "$OVERHEAD_EXTRA"} 2>&1 | grep --line-buffered -v '^ \|^[{}]' 
  ;;
ablation)
  # Where the launch-bound overhead goes: one cost taken out (or put back) per variant (ROUNDS, default 4).
  log ablation
  python3 bench/overhead.py --gpuscope "$GS" --rounds ${ROUNDS:-4} --out "$OUT/ablation.json" \
    --loops launch_bound --no-torch-profiler --variant default= \
    --variant torch_callback_only=GPUSCOPE_TORCH_OPS=0 \
    --variant "no_shapes_no_memory=GPUSCOPE_TORCH_SHAPES=0 GPUSCOPE_TORCH_MEMORY=0" \
    --variant "no_torch=--trace cuda,nvtx" \
    --variant "kernels_only=--trace cuda,nvtx GPUSCOPE_DRIVER_API=0 GPUSCOPE_RUNTIME_API=0" \
    2>&1 | grep --line-buffered -v '^ \|^[{}]'
  ;;
sampling)
  # Sampled tracing (record --sample) against no profiler on the launch-bound
  # loop, with and without the torch plugin.
  # Median and mean step ratios both (overhead.py): untraced steps dominate the median.
  log sampling
  variants=(--variant "sample_10pct=--sample 0.3,2.7")
  [ -n "${SAMPLING_NO_DEFAULT:-}" ] || variants+=(--variant default=)
  [ -n "${SAMPLING_NO_NOTORCH:-}" ] || variants+=(--variant "sample_10pct_no_torch=--sample 0.3,2.7 --trace cuda,nvtx")
  # CUPTI is torn down while untraced by default; SAMPLING_KEPT=1 adds a run that keeps it.
  [ -z "${SAMPLING_KEPT:-}" ] || variants+=(--variant "sample_10pct_kept=--sample 0.3,2.7 GPUSCOPE_CUPTI_FINALIZE=0")
  # SAMPLING_MEMORY=1: full tracing with and without CUPTI's memory records (--trace ...,memory).
  [ -z "${SAMPLING_MEMORY:-}" ] || variants+=(--variant full= --variant "full_memory=--trace cuda,nvtx,torch,memory")
  # SAMPLING_NO_CUPTI=1: the same sampling without CUPTI at all (the plugin and the collector only),
  # to tell what is left after teardown from CUPTI's own remains.
  [ -z "${SAMPLING_NO_CUPTI:-}" ] || variants+=(--variant "sample_10pct_no_cupti=--sample 0.3,2.7 --trace nvtx,torch")
  # SAMPLING_PLUGIN_ABLATION=1: where the plugin's extra cost under sampling goes (session 14: +11 points
  # over sampling without it, paired by round): without it, without shapes, without allocator memory.
  [ -z "${SAMPLING_PLUGIN_ABLATION:-}" ] || variants+=(--variant "sample_10pct_no_torch=--sample 0.3,2.7 --trace cuda,nvtx"
    --variant "sample_10pct_no_shapes=--sample 0.3,2.7 GPUSCOPE_TORCH_SHAPES=0"
    --variant "sample_10pct_no_memory=--sample 0.3,2.7 GPUSCOPE_TORCH_MEMORY=0")
  # Address randomization stays on unless LAYOUT=fixed (also for `noise`): --fixed-layout gives every
  # run of one variant the same layout, but variants differ in environment (LD_PRELOAD, GPUSCOPE_*), so
  # each variant may carry a layout of its own, a bias the A/A runs cannot show (session 14's +11.6-point
  # plugin gap under sampling did not survive random layouts or the in-process `ab` stage).
  python3 bench/overhead.py --gpuscope "$GS" --rounds ${ROUNDS:-3} --out "$OUT/sampling.json" \
    $([ "${LAYOUT:-random}" = fixed ] && echo --fixed-layout) \
    --loops launch_bound --launch-steps ${STEPS:-600} --no-torch-profiler ${CPUS:+--cpus $CPUS} "${variants[@]}" \
    2>&1 | grep --line-buffered -v '^ \|^[{}]'
  ;;
ab)
  # What recording ops costs the launch-bound loop, inside one process (bench/torch_plugin/ab_steps.py):
  # the plugin records ops in alternate blocks of AB_BLOCK steps, everything else unchanged, so the
  # ±20-40 % between processes drops out. AB_MODES: full (no sampling), idle (full; the blocks without
  # ops keep the callback, returning at once), lean (full, shapes and allocator memory off), lean_idle
  # (both: torch's cost of calling the callback without boxing inputs), sampled (--sample 0.3,2.7),
  # compute (full, the compute-bound loop). AB_RUNS processes each, AB_STEPS steps (sampled: x8); full and sampled also
  # time a plain run for the points-of-plain figures.
  log ab
  echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
  python3 -c 'import time; n=10**6; t=time.perf_counter_ns(); [time.monotonic_ns() for _ in range(n)]; print("monotonic_ns in a python loop: %.0f ns per call" % ((time.perf_counter_ns()-t)/n))'
  for mode in ${AB_MODES:-full idle lean sampled}; do
    opts=(--steps ${AB_STEPS:-400})
    case $mode in
    full) opts+=(--plain) ;;
    idle) opts+=(--idle) ;;
    lean) opts+=(--env GPUSCOPE_TORCH_SHAPES=0 --env GPUSCOPE_TORCH_MEMORY=0) ;;
    lean_idle) opts+=(--idle --env GPUSCOPE_TORCH_SHAPES=0 --env GPUSCOPE_TORCH_MEMORY=0) ;;
    compute) opts=(--steps 96 --plain --script samples/torch/compute_bound.py) ;;
    sampled) opts=(--steps $((${AB_STEPS:-400} * 8)) --sample 0.3,2.7 --plain) ;;
    esac
    echo "--- ab $mode"
    guard 300 python3 bench/torch_plugin/ab_steps.py --gpuscope "$GS" --python python3 --device cuda \
      --block ${AB_BLOCK:-8} --runs ${AB_RUNS:-2} ${CPUS:+--cpus $CPUS} "${opts[@]}" --json "$OUT/ab_$mode.json" --force
  done
  ;;
noise)
  # Why one process of the launch-bound loop runs ±20 % slower than another:
  # the machine's CPU topology, then plain against plain (A/A) and the sampled
  # recording with --placement (where each run's threads ran, context switches).
  log noise
  lscpu; lscpu -e; grep -m3 MHz /proc/cpuinfo
  cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || echo "no cpufreq governor"
  numactl -H 2>/dev/null | head -4; cat /proc/loadavg
  echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null) defrag: $(cat /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null)"
  nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,persistence_mode,compute_mode --format=csv
  # NOISE_FLAGS: e.g. "--calibrate --no-thp" (bench/overhead.py); --placement unless NOISE_NO_PLACEMENT=1;
  # the A/A run unless NOISE_NO_AA=1.
  python3 bench/overhead.py --gpuscope "$GS" --rounds ${ROUNDS:-3} --out "$OUT/noise.json" \
    $([ "${LAYOUT:-random}" = fixed ] && echo --fixed-layout) \
    $([ -n "${NOISE_NO_PLACEMENT:-}" ] || echo --placement) ${NOISE_FLAGS:-} \
    --loops launch_bound --launch-steps ${STEPS:-300} --no-torch-profiler ${CPUS:+--cpus $CPUS} \
    $([ -n "${NOISE_NO_AA:-}" ] || echo --variant plain_again=!) --variant "sample_10pct=--sample 0.3,2.7" ${NOISE_NOTORCH:+--variant "sample_10pct_no_torch=--sample 0.3,2.7 --trace cuda,nvtx"} \
    2>&1 | grep --line-buffered -v '^ \|^[{}]'
  ;;
cupti_floor)
  # CUPTI's own floor beside ours (run on 2026-12-03: noisy, 2 rounds).
  log cupti_floor
  BARE="!CUDA_INJECTION64_PATH=$PWD/.carry/lib/libbare_cupti.so LD_LIBRARY_PATH=$(cupti_dir)"
  python3 bench/overhead.py --gpuscope "$GS" --rounds ${ROUNDS:-3} --out "$OUT/cupti_floor.json" \
    --loops launch_bound --launch-steps ${STEPS:-400} --no-torch-profiler --variant default= \
    --variant "bare_cupti=$BARE" --variant "bare_cupti_runtime=$BARE BARE_CUPTI_RUNTIME=1" \
    --variant "kernels_only=--trace cuda,nvtx GPUSCOPE_DRIVER_API=0 GPUSCOPE_RUNTIME_API=0" \
    --variant "torch_no_cupti=--trace nvtx,torch" \
    2>&1 | grep --line-buffered -v '^ \|^[{}]'
  ;;
launch_cost)
  # CPU ns per kernel launch (and per .item()-like round trip) under CUPTI setups, in one process
  # (bench/collector/launch_cost.cu, built here by bench/collector/build_launch_cost.sh into .carry/lib).
  # LC_PROCESSES=N runs it in N processes one after the other (launch_cost.jsonl, one line
  # each): whether CUPTI's cost per launch changes from one process to the next, as the
  # tracing cost of a recorded ResNet-50 does.
  log launch_cost
  for p in $(seq "${LC_PROCESSES:-1}"); do
    guard 300 env LD_LIBRARY_PATH="$(cupti_dir)" .carry/lib/launch_cost "${LC_ROUNDS:-7}" "${LC_LAUNCHES:-51200}" > "$OUT/lc.json"
    [ "$p" = 1 ] && cp "$OUT/lc.json" "$OUT/launch_cost.json"
    tr -d '\n' < "$OUT/lc.json" >> "$OUT/launch_cost.jsonl" && echo >> "$OUT/launch_cost.jsonl"
  done
  rm -f "$OUT/lc.json"
  python3 bench/collector/launch_cost_table.py "$OUT/launch_cost.jsonl"
  ;;
sampled_record)
  # A sampled recording resumes tracing at every stretch (with and without cuptiFinalize).
  log sampled_record
  # sampled_run NAME FIN CHECK_OPTION RECORD_OPTION...: one sampled recording of the
  # launch-bound loop, with (FIN=1) or without teardown, checked.
  sampled_run() {
    local db=$W/$1.db fin=$2 check=$3
    shift 3
    GPUSCOPE_CUPTI_FINALIZE=$fin guard 120 "$GS" record --force --sample 0.3,0.7 "$@" -o "$db" -- \
      python3 samples/torch/launch_bound.py --steps ${SAMPLED_STEPS:-400} | grep -o '"median_step_ms": [0-9.]*'
    python3 tests/gpu/check_sampled.py $check $([ "$fin" = 1 ] && echo --min-finalizes 2) "$db"
  }
  for fin in ${SAMPLED_FIN:-0 1}; do
    sampled_run sampled_$fin $fin ""
    "$GS" analyze "$W/sampled_$fin.db" 2>&1 | head -12
  done
  # Without the plugin there are no steps: tracing switches by time on the writer
  # thread, and the teardown happens at the next CUDA API exit.
  for fin in ${SAMPLED_NOTORCH_FIN:-}; do sampled_run sampled_nt_$fin $fin --no-ops --trace cuda,nvtx; done
  # The recordings stay in $W: at ~20 MB they made results.tgz too large to come back.
  ;;
steps_window)
  # record --steps A-B: the launch-bound loop traced in steps 100-199 of 400 only (one stretch,
  # CUPTI torn down after it), then the median step inside and outside the window.
  log steps_window
  guard 120 "$GS" record --force --steps 100-199 -o "$W/steps_window.db" -- \
    python3 samples/torch/launch_bound.py --steps 400 | grep -o '"median_step_ms": [0-9.]*'
  python3 tests/gpu/check_sampled.py --stretches 1 --min-finalizes 1 "$W/steps_window.db"
  "$GS" analyze "$W/steps_window.db" 2>&1 | head -6
  ;;
ddp_sampled)
  # DDP over NCCL under --sample, one GPU per rank (needs nvidia-h200-x2): each rank switches at its
  # own step boundaries and tears CUPTI down on its own, draining its GPU while the other rank may
  # still be launching the matching all-reduce. Must end with rc 0 (no hang) and pass check_sampled.
  log ddp_sampled
  GPUSCOPE_CUPTI_FINALIZE=1 guard 180 "$GS" record --force --sample 0.3,0.7 -o "$W/ddp_sampled.db" -- \
    python3 -m torch.distributed.run --standalone --nproc_per_node=2 samples/torch/ddp_gloo.py \
    --backend nccl --device cuda --steps ${DDP_STEPS:-3000}
  echo "ddp_sampled: rc=$?"
  python3 tests/gpu/check_sampled.py --min-finalizes 2 "$W/ddp_sampled.db"
  "$GS" analyze "$W/ddp_sampled.db" 2>&1 | head -8
  ;;
sampled_graph)
  # CUDA graphs replayed ahead of the host under sampling with GPUSCOPE_CUPTI_FINALIZE=1.
  # On 2026-12-03 a teardown without draining the device first killed the job with
  # "unspecified launch failure"; with the drain, each resume after a teardown waited for
  # the queued replays (1 step per stretch), so a job that replays graphs now keeps CUPTI.
  # (1) steps as ProfilerStep ranges (graph_steps.py): at least 50 whole steps per stretch;
  # (2) advisor launch-bound --fixed: its one optimizer step ends inside torch.cuda.graph,
  # then it switches by time. Both must end with rc 0.
  log sampled_graph
  GPUSCOPE_CUPTI_FINALIZE=1 guard 120 "$GS" record --force --sample 0.3,0.7 -o "$W/graph_steps.db" -- \
    python3 tests/gpu/graph_steps.py --seconds ${GRAPH_SECONDS:-6}
  echo "sampled_graph steps: rc=$?"
  python3 tests/gpu/check_sampled.py --gpu-behind --min-steps 50 "$W/graph_steps.db"
  GPUSCOPE_CUPTI_FINALIZE=1 guard 120 "$GS" record --force --sample 0.3,0.7 -o "$W/sampled_graph.db" -- \
    python3 samples/advisor/launch-bound.py --fixed --steps ${GRAPH_STEPS:-15000}
  echo "sampled_graph by time: rc=$?"
  python3 tests/gpu/check_sampled.py --gpu-behind "$W/sampled_graph.db"
  ;;
esac
done
log done
