#!/bin/bash
# Import speed against trace size: `gpuscope import` of synthetic torch.profiler
# traces (gen_kineto_trace.py) of 0.2, 1 and 2 GB, MB/s and peak memory each.
# The rates should stay within 20 % of each other (import time linear in the
# size) and the peak memory flat.
#
#   bench/formats/import_scaling.sh [BUILD_DIR] [BASE_BINARY]   (default: build)
#   REPEAT=5 SIZES="200 1000 2000" bench/formats/import_scaling.sh build /tmp/gpuscope_base
#   NICE=-10 ...     import at that niceness (others' builds then take less of its core)
#
# Every trace is generated first (3.2 GB under /tmp with the default sizes)
# and the imports are alternated: each round imports every size once, in
# turn, with BASE_BINARY's import right after the build's when one is given.
# On a shared machine the load changes from second to second; imports of one
# size in a row would each meet a different load, alternated ones meet the
# same. Per size and binary: the best and the median wall time of REPEAT
# imports, the least CPU time (user + sys, which others' load hardly changes)
# and the peak RSS. Exit status 1 when the best wall-time rates of the build
# spread by more than 20 %.
set -euo pipefail
BUILD=${1:-build}
BASE=${2:-}
SIZES=${SIZES:-200 1000 2000}
REPEAT=${REPEAT:-3}
NICE=${NICE:-0}
GPUSCOPE=$BUILD/bin/gpuscope
[ -x "$GPUSCOPE" ] || { echo "import_scaling: no $GPUSCOPE (build the gpuscope target)" >&2; exit 2; }
[ -z "$BASE" ] || [ -x "$BASE" ] || { echo "import_scaling: no $BASE" >&2; exit 2; }
DIR=$(mktemp -d /tmp/gpuscope_import_scaling.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
# Copies: a build relinking BUILD_DIR's binary meanwhile changes nothing here.
cp "$GPUSCOPE" "$DIR/new"
bins=(new)
if [ -n "$BASE" ]; then
  cp "$BASE" "$DIR/base"
  bins+=(base)
fi

for mb in $SIZES; do
  /usr/bin/python3 "$(dirname "$0")/gen_kineto_trace.py" --mb "$mb" -o "$DIR/kineto_${mb}mb.json"
done

echo "gpuscope import, $REPEAT alternated rounds, nice $NICE; load before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
# One line per import: binary size wall cpu peak_kb db_bytes events
for ((i = 0; i < REPEAT; ++i)); do
  for mb in $SIZES; do
    for bin in "${bins[@]}"; do
      rm -f "$DIR/out.db"
      sync  # no import pays for the previous one's dirty pages
      nice -n "$NICE" /usr/bin/time -f "%e %U %S %M" -o "$DIR/time" \
        "$DIR/$bin" import -q "$DIR/kineto_${mb}mb.json" -o "$DIR/out.db" 2> "$DIR/log"
      read -r wall user sys kb < "$DIR/time"
      events=$(sed -n 's/^gpuscope: \([0-9]*\) events.*/\1/p' "$DIR/log")
      echo "$bin $mb $wall $(echo "$user + $sys" | bc -l) $kb $(stat -c %s "$DIR/out.db") $events" >> "$DIR/runs"
    done
  done
done

/usr/bin/python3 - "$DIR" "$SIZES" "${bins[@]}" <<'EOF'
import os, statistics, sys
d, sizes, bins = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
runs = [l.split() for l in open(os.path.join(d, "runs"))]
print("%-5s %8s %9s %9s %9s %9s %9s %9s %11s %8s %7s" % ("", "trace", "events", "best s", "median s", "MB/s",
      "MB/s med", "cpu s", "MB/s (cpu)", "peak MB", "db MB"))
spread = {}
for b in bins:
    rates, cpu_rates = [], []
    for mb in sizes:
        rs = [r for r in runs if r[0] == b and r[1] == mb]
        mbytes = os.path.getsize(os.path.join(d, "kineto_%smb.json" % mb)) / 1e6
        walls = [float(r[2]) for r in rs]
        cpu = min(float(r[3]) for r in rs)
        best, med = min(walls), statistics.median(walls)
        rates.append(mbytes / best)
        cpu_rates.append(mbytes / cpu)
        print("%-5s %5.1f GB %9s %9.2f %9.2f %9.0f %9.0f %9.2f %11.0f %8d %7d" % (
            b, mbytes / 1e3, rs[0][6] if len(rs[0]) > 6 else "?", best, med, mbytes / best, mbytes / med, cpu,
            mbytes / cpu, max(int(r[4]) for r in rs) // 1024, int(rs[0][5]) // 1000000))
    spread[b] = (max(rates) - min(rates)) / max(rates) * 100
    print("%-5s rates within %.0f %% of the fastest by best wall time (goal: 20 %%), %.0f %% by CPU time" % (
        b, spread[b], (max(cpu_rates) - min(cpu_rates)) / max(cpu_rates) * 100))
open(os.path.join(d, "spread"), "w").write("%f\n" % spread["new"])
EOF
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
(( $(echo "$(cat "$DIR/spread") <= 20" | bc -l) ))
