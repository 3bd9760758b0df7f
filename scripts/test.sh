#!/usr/bin/env bash
# Set-up command 2: installs what is missing, builds, and runs every test (CPU only).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/configure.sh -DGPUSCOPE_WERROR=ON
cd build
ctest --output-on-failure -j"$(nproc)"
