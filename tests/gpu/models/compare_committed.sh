#!/usr/bin/env bash
# The table of estimates against measured savings, on the CPU: the real-model
# recordings committed in tests/data (models_*.db.zst, trimmed copies of what
# advisor_models.sh recorded on the H200) analysed with this build, against the
# fixes timed without gpuscope (bench/results/*-real-models-timings.jsonl).
# Prints compare.py's table and exits 1 when one of its checks fails. It
# judges the rules' own estimates (--no-what-if), which these checks were made
# for; the what-if replay is judged by tests/gpu/whatif/compare.py on the H100
# set (docs/rules.md, "What-if").
#   tests/gpu/models/compare_committed.sh build/bin/gpuscope [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
gs=${1:?usage: compare_committed.sh GPUSCOPE [OUT_DIR]}
out=${2:-$(mktemp -d -t gpuscope_models_XXXXXX)}
mkdir -p "$out"
cat "$root"/bench/results/*-real-models-timings.jsonl > "$out/timings.jsonl"
for z in "$root"/tests/data/models_*.db.zst; do
  m=$(basename "$z" .db.zst)
  m=${m#models_}
  zstd -q -d -f "$z" -o "$out/$m.db"
  "$gs" analyze "$out/$m.db" --format json --no-what-if --force -o "$out/$m.json" 2>/dev/null
  rm -f "$out/$m.db"
done
python3 "$root/tests/gpu/models/compare.py" "$out"
