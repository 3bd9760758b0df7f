#!/usr/bin/env bash
# Times `gpuscope analyze` on a generated 10 M-event recording (2 cores, wall
# time and peak RSS from /usr/bin/time -v). Usage, from a build folder's parent:
#   bench/analyzer/run_bench.sh [BUILD_DIR] [EVENTS] [RUNS]
# The recording is generated once into /tmp (≈530 MB for 10 M events).
# NO_STEPS=1 times a copy without its step table, ranges and ops instead, as a
# job recorded without the torch plugin (steps from the launch sequence).
set -euo pipefail
BUILD=${1:-build}
EVENTS=${2:-10000000}
RUNS=${3:-3}
DB=/tmp/gpuscope_analyzer_bench_$((EVENTS / 1000000))m.db
if [ ! -f "$DB" ]; then
  "$BUILD/bin/analyzer_bench_gen" "$DB" "$EVENTS"
fi
if [ "${NO_STEPS:-0}" = 1 ]; then
  stripped=${DB%.db}_nosteps.db
  if [ ! -f "$stripped" ]; then
    cp "$DB" "$stripped"
    python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript("DELETE FROM step; DELETE FROM op; DELETE FROM range WHERE source BETWEEN 1 AND 6;"); c.commit()' "$stripped"
  fi
  DB=$stripped
fi
"$BUILD/bin/gpuscope" info "$DB" | sed -n '/^rows/,/^$/p'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), cores: $(nproc)"
for i in $(seq "$RUNS"); do
  /usr/bin/time -v taskset -c 0,1 "$BUILD/bin/gpuscope" analyze "$DB" --format json > /dev/null 2> /tmp/gpuscope_analyzer_bench_time.txt
  wall=$(grep "Elapsed (wall clock)" /tmp/gpuscope_analyzer_bench_time.txt | awk '{print $NF}')
  rss=$(grep "Maximum resident set size" /tmp/gpuscope_analyzer_bench_time.txt | awk '{print $NF}')
  user=$(grep "User time" /tmp/gpuscope_analyzer_bench_time.txt | awk '{print $NF}')
  sys=$(grep "System time" /tmp/gpuscope_analyzer_bench_time.txt | awk '{print $NF}')
  echo "run $i: wall $wall, user ${user} s, sys ${sys} s, peak RSS $((rss / 1024)) MiB"
done
echo "phases (GPUSCOPE_ANALYZE_TIMING=1, last run):"
GPUSCOPE_ANALYZE_TIMING=1 taskset -c 0,1 "$BUILD/bin/gpuscope" analyze "$DB" --format json 2>&1 > /dev/null | sed 's/^/  /'
