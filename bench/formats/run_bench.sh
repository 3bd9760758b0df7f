#!/bin/bash
# Import and export speed and peak memory of gpuscope's trace formats.
#
#   bench/formats/run_bench.sh [BUILD_DIR] [MB]      (defaults: build, 500)
#   REPEAT=3 bench/formats/run_bench.sh ...          best of 3 runs per step, with the range
#   CALLGRIND=1 bench/formats/run_bench.sh ...       also instructions per exported event
#
# Generates a torch.profiler-shaped trace of MB megabytes under /tmp (once),
# imports it plain and gzipped, exports the result to Chrome JSON (plain and
# .gz) and Perfetto, and prints wall time, CPU time (user + sys), rates and
# peak RSS from /usr/bin/time. Nothing is written into the repository.
#
# Every step starts after `sync` and with its output file removed: otherwise
# the kernel bills a step for writing back the previous step's dirty pages
# and for freeing the file it replaces (0.1-0.9 s of system time for a
# 400 MB output on the 2-core VM), which says nothing about the step.
set -euo pipefail
BUILD=${1:-build}
MB=${2:-500}
REPEAT=${REPEAT:-1}
B=$BUILD/bin/formats_bench
DIR=${BENCH_DIR:-/tmp/gpuscope_formats_bench}
mkdir -p "$DIR"
TRACE=$DIR/kineto_${MB}mb.json
[ -f "$TRACE" ] || /usr/bin/python3 "$(dirname "$0")/gen_kineto_trace.py" --mb "$MB" -o "$TRACE"
[ -f "$TRACE.gz" ] || gzip -1 -c "$TRACE" > "$TRACE.gz"
BYTES=$(stat -c %s "$TRACE")

# timed NAME OUTPUT CMD...: REPEAT runs; prints "wall cpu rss_mb cpu_min cpu_max" of
# the run with the least CPU time. The command's stdout goes to $DIR/NAME.out.
timed() {
  local name=$1 output=$2
  shift 2
  local best="" lo="" hi=""
  for ((i = 0; i < REPEAT; ++i)); do
    rm -f "$output"
    sync
    /usr/bin/time -f "%e %U %S %M" -o "$DIR/$name.time" "$@" > "$DIR/$name.out" || exit 1
    read -r wall user sys rss < "$DIR/$name.time"
    local cpu
    cpu=$(echo "$user + $sys" | bc -l)
    if [ -z "$best" ] || (( $(echo "$cpu < $lo" | bc -l) )); then best="$wall $cpu $((rss / 1024))"; fi
    if [ -z "$lo" ] || (( $(echo "$cpu < $lo" | bc -l) )); then lo=$cpu; fi
    if [ -z "$hi" ] || (( $(echo "$cpu > $hi" | bc -l) )); then hi=$cpu; fi
  done
  echo "$best $lo $hi"
}

echo "trace: $TRACE: $((BYTES / 1000000)) MB, gzip -1: $(( $(stat -c %s "$TRACE.gz") / 1000000 )) MB;" \
     "load: $(cut -d' ' -f1-3 /proc/loadavg); best of $REPEAT"
printf "%-24s %8s %8s %14s %16s %16s %8s\n" step "wall s" "cpu s" "cpu range" "rate (wall)" "rate (cpu)" "peak MB"
for kind in json gz; do
  in=$TRACE
  [ "$kind" = gz ] && in=$TRACE.gz
  read -r wall cpu rss lo hi < <(timed "import_$kind" "$DIR/bench.db" "$B" import "$in" "$DIR/bench.db")
  printf "%-24s %8.2f %8.2f %6.2f-%-6.2f %11.0f MB/s %11.0f MB/s %8d\n" "import ($kind)" "$wall" "$cpu" "$lo" "$hi" \
    "$(echo "$BYTES / 1000000 / $wall" | bc -l)" "$(echo "$BYTES / 1000000 / $cpu" | bc -l)" "$rss"
done
sed 's/^/  /' "$DIR/import_json.out"
echo "  database: $(( $(stat -c %s "$DIR/bench.db") / 1000000 )) MB"
for out in chrome.json chrome.json.gz trace.pftrace; do
  mode=chrome
  [ "$out" = trace.pftrace ] && mode=perfetto
  read -r wall cpu rss lo hi < <(timed "export_$out" "$DIR/$out" "$B" "$mode" "$DIR/bench.db" "$DIR/$out")
  events=$(grep -o "[0-9]* events" "$DIR/export_$out.out" | cut -d' ' -f1)
  printf "%-24s %8.2f %8.2f %6.2f-%-6.2f %9.2f M ev/s %9.2f M ev/s %8d  %s events, %s MB\n" "export $out" "$wall" \
    "$cpu" "$lo" "$hi" "$(echo "$events / 1000000 / $wall" | bc -l)" "$(echo "$events / 1000000 / $cpu" | bc -l)" \
    "$rss" "$events" "$(( $(stat -c %s "$DIR/$out") / 1000000 ))"
done
if [ "${CALLGRIND:-0}" = 1 ]; then
  # Load-independent: instructions counted by callgrind (about 50x slower).
  for out in chrome.json trace.pftrace; do
    mode=chrome
    [ "$out" = trace.pftrace ] && mode=perfetto
    rm -f "$DIR/cg_$out"
    refs=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$B" "$mode" "$DIR/bench.db" "$DIR/cg_$out" 2>&1 |
           sed -n 's/.*I *refs: *//p' | tr -d ,)
    events=$(grep -o "[0-9]* events" "$DIR/export_$out.out" | cut -d' ' -f1)
    printf "%-24s %16s instructions, %6.0f per event\n" "callgrind $out" "$refs" "$(echo "$refs / $events" | bc -l)"
    rm -f "$DIR/cg_$out"
  done
fi
