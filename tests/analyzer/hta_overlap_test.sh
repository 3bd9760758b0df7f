#!/usr/bin/env bash
# The ranks' NCCL overlap in `gpuscope analyze` against Holistic Trace Analysis's
# definition applied to the per-rank traces `gpuscope export --tensorboard` writes
# (tests/gpu/hta_overlap.py), on the synthetic two-rank job "nccl-overlap" (50 % and
# 100 %, asserted in ranks_test.cpp). On the GPU machine the same script runs HTA itself.
# Usage: hta_overlap_test.sh GPUSCOPE ANALYZER_SCENARIO WORK_DIR
set -euo pipefail
gs=$1 scenario=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
"$scenario" nccl-overlap "$dir/run.db"
"$gs" export "$dir/run.db" --tensorboard "$dir/tb" -q
"$gs" analyze "$dir/run.db" --format json -o "$dir/report.json"
python3 "$(dirname "$0")/../gpu/hta_overlap.py" "$dir/tb" --against "$dir/report.json" --tolerance 0.5
