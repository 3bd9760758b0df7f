#!/bin/bash
# Import speed against trace size: `gpuscope import` of synthetic torch.profiler
# traces (gen_kineto_trace.py) of 0.2, 1 and 2 GB, MB/s and peak memory each.
# The rates should stay within 20 % of each other (import time linear in the
# size) and the peak memory flat.
#
#   bench/formats/import_scaling.sh [BUILD_DIR]      (default: build)
#   REPEAT=3 SIZES="200 1000 2000" bench/formats/import_scaling.sh build
#
# One trace at a time is generated under /tmp (2 GB at most, plus its
# database), imported REPEAT times (best wall time kept, with the range; the
# least CPU time, user + sys, beside it: steadier on a shared machine) and
# deleted. Exit status 1 when the wall-time rates spread by more than 20 %.
set -euo pipefail
BUILD=${1:-build}
SIZES=${SIZES:-200 1000 2000}
REPEAT=${REPEAT:-3}
GPUSCOPE=$BUILD/bin/gpuscope
[ -x "$GPUSCOPE" ] || { echo "import_scaling: no $GPUSCOPE (build the gpuscope target)" >&2; exit 2; }
DIR=$(mktemp -d /tmp/gpuscope_import_scaling.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
# A copy: a build relinking BUILD_DIR's binary meanwhile changes nothing here.
cp "$GPUSCOPE" "$DIR/gpuscope"
GPUSCOPE=$DIR/gpuscope

echo "gpuscope import, best of $REPEAT; load before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
printf "%8s %10s %9s %15s %9s %8s %11s %10s %9s\n" "trace" "events" "wall s" "wall range s" "MB/s" "cpu s" "MB/s (cpu)" "peak MB" "db MB"
rates=()
for mb in $SIZES; do
  trace=$DIR/kineto_${mb}mb.json
  /usr/bin/python3 "$(dirname "$0")/gen_kineto_trace.py" --mb "$mb" -o "$trace"
  bytes=$(stat -c %s "$trace")
  best="" lo="" hi="" rss=0 events="" cpu=""
  for ((i = 0; i < REPEAT; ++i)); do
    rm -f "$DIR/out.db"
    sync  # no step pays for the previous one's dirty pages
    /usr/bin/time -f "%e %U %S %M" -o "$DIR/time" "$GPUSCOPE" import -q "$trace" -o "$DIR/out.db" 2> "$DIR/log"
    read -r wall user sys kb < "$DIR/time"
    c=$(echo "$user + $sys" | bc -l)
    if [ -z "$cpu" ] || (( $(echo "$c < $cpu" | bc -l) )); then cpu=$c; fi
    events=$(sed -n 's/^gpuscope: \([0-9]*\) events.*/\1/p' "$DIR/log")
    if [ -z "$best" ] || (( $(echo "$wall < $best" | bc -l) )); then best=$wall; fi
    if [ -z "$lo" ] || (( $(echo "$wall < $lo" | bc -l) )); then lo=$wall; fi
    if [ -z "$hi" ] || (( $(echo "$wall > $hi" | bc -l) )); then hi=$wall; fi
    if (( kb > rss )); then rss=$kb; fi
  done
  rate=$(echo "$bytes / 1000000 / $best" | bc -l)
  rates+=("$rate")
  printf "%6.1f GB %10s %9.2f %7.2f-%-7.2f %9.0f %8.2f %11.0f %10d %9d\n" "$(echo "$bytes / 1000000000" | bc -l)" \
    "$events" "$best" "$lo" "$hi" "$rate" "$cpu" "$(echo "$bytes / 1000000 / $cpu" | bc -l)" $((rss / 1024)) $(( $(stat -c %s "$DIR/out.db") / 1000000 ))
  rm -f "$trace" "$DIR/out.db"
done
min=$(printf "%s\n" "${rates[@]}" | sort -g | head -1)
max=$(printf "%s\n" "${rates[@]}" | sort -g | tail -1)
spread=$(echo "($max - $min) / $max * 100" | bc -l)
printf "rates within %.0f %% of the fastest (goal: 20 %%); load after: %s\n" "$spread" "$(cut -d' ' -f1-3 /proc/loadavg)"
(( $(echo "$spread <= 20" | bc -l) ))
