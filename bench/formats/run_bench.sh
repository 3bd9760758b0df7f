#!/bin/bash
# Import and export speed and peak memory of gpuscope's trace formats.
#
#   bench/formats/run_bench.sh [BUILD_DIR] [MB]      (defaults: build, 500)
#
# Generates a torch.profiler-shaped trace of MB megabytes under /tmp (once),
# imports it plain and gzipped, exports the result to Chrome JSON (plain and
# .gz) and Perfetto, and prints wall time, CPU time (user + sys), rates and
# peak RSS from /usr/bin/time. Nothing is written into the repository.
set -euo pipefail
BUILD=${1:-build}
MB=${2:-500}
B=$BUILD/bin/formats_bench
DIR=${BENCH_DIR:-/tmp/gpuscope_formats_bench}
mkdir -p "$DIR"
TRACE=$DIR/kineto_${MB}mb.json
[ -f "$TRACE" ] || /usr/bin/python3 "$(dirname "$0")/gen_kineto_trace.py" --mb "$MB" -o "$TRACE"
[ -f "$TRACE.gz" ] || gzip -1 -c "$TRACE" > "$TRACE.gz"
BYTES=$(stat -c %s "$TRACE")

# timed NAME CMD...: "wall cpu rss_mb"; the command's stdout goes to $DIR/NAME.out
timed() {
  local name=$1
  shift
  /usr/bin/time -f "%e %U %S %M" -o "$DIR/$name.time" "$@" > "$DIR/$name.out" || exit 1
  read -r wall user sys rss < "$DIR/$name.time"
  echo "$wall $(echo "$user + $sys" | bc -l) $((rss / 1024))"
}

echo "trace: $TRACE: $((BYTES / 1000000)) MB, gzip -1: $(( $(stat -c %s "$TRACE.gz") / 1000000 )) MB; load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-24s %8s %8s %16s %16s %8s\n" step "wall s" "cpu s" "rate (wall)" "rate (cpu)" "peak MB"
for kind in json gz; do
  in=$TRACE
  [ "$kind" = gz ] && in=$TRACE.gz
  read -r wall cpu rss < <(timed "import_$kind" "$B" import "$in" "$DIR/bench.db")
  printf "%-24s %8.2f %8.2f %11.0f MB/s %11.0f MB/s %8d\n" "import ($kind)" "$wall" "$cpu" \
    "$(echo "$BYTES / 1000000 / $wall" | bc -l)" "$(echo "$BYTES / 1000000 / $cpu" | bc -l)" "$rss"
done
sed 's/^/  /' "$DIR/import_json.out"
echo "  database: $(( $(stat -c %s "$DIR/bench.db") / 1000000 )) MB"
for out in chrome.json chrome.json.gz trace.pftrace; do
  mode=chrome
  [ "$out" = trace.pftrace ] && mode=perfetto
  read -r wall cpu rss < <(timed "export_$out" "$B" "$mode" "$DIR/bench.db" "$DIR/$out")
  events=$(grep -o "[0-9]* events" "$DIR/export_$out.out" | cut -d' ' -f1)
  printf "%-24s %8.2f %8.2f %9.2f M ev/s %9.2f M ev/s %8d  %s events, %s MB\n" "export $out" "$wall" "$cpu" \
    "$(echo "$events / 1000000 / $wall" | bc -l)" "$(echo "$events / 1000000 / $cpu" | bc -l)" "$rss" \
    "$events" "$(( $(stat -c %s "$DIR/$out") / 1000000 ))"
done
