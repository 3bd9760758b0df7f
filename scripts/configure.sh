#!/usr/bin/env bash
# Configures and builds gpuscope into ./build with every part this machine can build.
set -euo pipefail
cd "$(dirname "$0")/.."
opts=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
if [ -d /usr/lib/x86_64-linux-gnu/cmake/Torch ]; then
  opts+=(-DGPUSCOPE_WITH_TORCH=ON -DTorch_DIR=/usr/lib/x86_64-linux-gnu/cmake/Torch)
fi
if [ ! -f /usr/local/cuda/include/cupti.h ]; then
  echo "gpuscope: note: no CUDA toolkit in /usr/local/cuda: the collector and its tests are not built" >&2
fi
cmake -S . -B build "${opts[@]}" "$@"
cmake --build build -j"$(nproc)"
