#!/usr/bin/env bash
# Set-up command 1: installs what is missing, builds, and analyzes a bundled real
# recording from an H200 (no GPU needed).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/configure.sh
# A PyTorch training loop recorded on an H200 (samples/advisor/amp.py): fp32
# matmuls on CUDA cores, which the analyzer should name first, with the fix.
demo=tests/data/advisor_amp.db
if [ ! -f "$demo" ]; then demo=$(ls tests/data/*.db | head -n 1); fi
build/bin/gpuscope info "$demo"
if build/bin/gpuscope analyze --help >/dev/null 2>&1; then
  build/bin/gpuscope analyze "$demo"
fi
