#!/usr/bin/env bash
# Times `gpuscope cluster` on N synthetic rank files (one rank per file, rank 2
# a straggler) on a local Dask cluster: wall time and peak RSS from
# /usr/bin/time -v, which is that of the largest single process (the driver, the
# scheduler or a worker), and the peak of all of them together (the process
# tree's RSS summed, sampled every 100 ms). For comparison, the same job merged
# into one file and analysed.
# Usage, from a build folder's parent:
#   bench/cluster/run_bench.sh [BUILD_DIR] [RANKS...]      (default: 64 512)
# WORKERS (default: one per core) and STEPS/KERNELS (default 30/40) set the rest.
set -euo pipefail
BUILD=${1:-build}
[ $# -gt 0 ] && shift
if [ $# -gt 0 ]; then RANKS=("$@"); else RANKS=(64 512); fi
WORKERS=${WORKERS:-$(nproc)}
STEPS=${STEPS:-30}
KERNELS=${KERNELS:-40}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), cores: $(nproc), workers: $WORKERS, $STEPS steps x $KERNELS kernels per rank"
tree_rss_kb() {  # the RSS of a process and all its descendants, summed
  local pids=("$1") all=()
  while [ ${#pids[@]} -gt 0 ]; do
    all+=("${pids[@]}")
    mapfile -t pids < <(ps -o pid= --ppid "$(IFS=,; echo "${pids[*]}")" 2> /dev/null | tr -d ' ')
  done
  ps -o rss= -p "$(IFS=,; echo "${all[*]}")" 2> /dev/null | awk '{s += $1} END {print s + 0}'
}
measure() {  # label, command...: wall time and the largest process's peak RSS
  local label=$1 t=/tmp/gpuscope_cluster_bench_time.txt
  shift
  /usr/bin/time -v "$@" > /dev/null 2> "$t" || { cat "$t"; exit 1; }
  local wall rss
  wall=$(grep "Elapsed (wall clock)" "$t" | awk '{print $NF}')
  rss=$(grep "Maximum resident set size" "$t" | awk '{print $NF}')
  echo "  $label: wall $wall, user $(grep 'User time' "$t" | awk '{print $NF}') s, sys $(grep 'System time' "$t" | awk '{print $NF}') s, peak RSS $((rss / 1024)) MiB"
}
measure_all() {  # label, command...: the peak of every process's RSS together (a second run: sampling costs CPU)
  local label=$1 peak=0 now
  shift
  "$@" > /dev/null &
  local pid=$!
  while kill -0 "$pid" 2> /dev/null; do
    now=$(tree_rss_kb "$pid" || true)
    if [ "${now:-0}" -gt "$peak" ]; then peak=$now; fi
    sleep 0.1
  done
  wait "$pid"
  echo "  $label: peak RSS of all its processes together $((peak / 1024)) MiB"
}
for n in "${RANKS[@]}"; do
  dir=/tmp/gpuscope_cluster_bench_$n
  if [ ! -f "$dir/node_$(printf %04d $((n - 1))).db" ]; then
    rm -rf "$dir"
    "$BUILD/bin/cluster_bench_gen" "$dir" "$n" --steps "$STEPS" --kernels "$KERNELS" > /dev/null
  fi
  echo "$n ranks, $(du -sh "$dir" | cut -f1) in $n files:"
  files=("$dir"/node_*.db)
  measure "gpuscope cluster (local Dask, $WORKERS workers)" "$BUILD/bin/gpuscope" cluster -q --workers "$WORKERS" "${files[@]}"
  measure_all "gpuscope cluster, driver, scheduler and workers" "$BUILD/bin/gpuscope" cluster -q --workers "$WORKERS" "${files[@]}"
  measure "per-rank pass of one file (gpuscope cluster --summarize)" "$BUILD/bin/gpuscope" cluster --summarize "${files[0]}"
  "$BUILD/bin/gpuscope" cluster --summarize "${files[@]}" > "$dir.jsonl"
  measure "reduce alone ($(du -h "$dir.jsonl" | cut -f1) of summaries)" "$BUILD/bin/gpuscope" cluster --from-summaries "$dir.jsonl"
  measure "for comparison: gpuscope merge" "$BUILD/bin/gpuscope" merge -q -f "${files[@]}" -o "$dir.merged.db"
  measure "for comparison: gpuscope analyze of the merged file" "$BUILD/bin/gpuscope" analyze "$dir.merged.db"
  rm -f "$dir.merged.db" "$dir.jsonl"
done
