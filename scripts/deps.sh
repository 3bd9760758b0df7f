#!/usr/bin/env bash
# Installs the Debian 12 packages gpuscope builds and tests with (needs root or sudo).
# Used by scripts/demo.sh, scripts/test.sh and .ci/run, so the list lives in one place.
set -euo pipefail
packages=(
  build-essential cmake pkg-config git ca-certificates python3 sqlite3 python3-distributed
  python3-venv python3-pip
  libsqlite3-dev libcli11-dev libgtest-dev libgmock-dev nlohmann-json3-dev
  libprotobuf-dev protobuf-compiler zlib1g-dev libzstd-dev zstd
  libtorch-dev python3-torch
  qt6-base-dev libgl-dev xvfb
  clang-14 libclang-rt-14-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
echo "gpuscope: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update
$sudo apt-get install -y --no-install-recommends "${missing[@]}"
