#!/usr/bin/env bash
# Set-up command 1: installs what is missing, builds, and analyzes a bundled real
# recording from an H200 (no GPU needed).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/configure.sh
# timm's ResNet-50, fp32, recorded on an H200 with `record`'s default (a
# control stretch runs untraced, so the report knows the job's step without
# gpuscope): the what-if plan ranks its fixes (torch.compile, channels_last).
mkdir -p build/demo
demo=build/demo/resnet50.db
zstd -dqf tests/data/models_resnet50.db.zst -o "$demo"
build/bin/gpuscope info "$demo"
if build/bin/gpuscope analyze --help >/dev/null 2>&1; then
  build/bin/gpuscope analyze "$demo"
fi
