#!/usr/bin/env bash
# Tracing cost on real models (GPU machine): for every loop, ROUNDS rounds of
# alternated runs (plain, gpuscope's default recording, torch.profiler with
# record_shapes and profile_memory; each round starts one mode later), then the
# table of bench/models/tracing_cost_table.py. The loops are the models of
# tests/gpu/models/real_models.py, their plain variant.
#
# Usage (repository root, .carry/ holding bin/gpuscope and the torch plugin):
#   OUT=/tmp/out ROUNDS=5 LOOPS="resnet50 sync_loop lightning_cpu pageable_copy" bench/models/tracing_cost.sh
# Results: $OUT/models/overhead.jsonl (one line per run) and $OUT/models/tracing_cost.md.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gpuscope_gpu_out}
LOOPS=${LOOPS:-"resnet50 sync_loop lightning_cpu pageable_copy tiny_mlp gpt2"}
MODELS="$LOOPS" STAGES=overhead OVERHEAD_MODELS="$LOOPS" OVERHEAD_ROUNDS=${ROUNDS:-5} \
  OVERHEAD_MODES=${MODES:-"plain default torch_profiler"} OUT=$OUT bash tests/gpu/models/advisor_models.sh
python3 bench/models/tracing_cost_table.py "$OUT/models/overhead.jsonl" --json "$OUT/models/tracing_cost.json" |
  tee "$OUT/models/tracing_cost.md"
