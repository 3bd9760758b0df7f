#!/usr/bin/env bash
# Builds bench/collector/launch_cost.cu (nvcc, static cudart, sm_90 code and PTX)
# into OUT_DIR/launch_cost. It needs libcupti.so.13 at run time (LD_LIBRARY_PATH).
#   bench/collector/build_launch_cost.sh OUT_DIR
set -euo pipefail
out=${1:?usage: build_launch_cost.sh OUT_DIR}
cuda=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$out"
"$cuda/bin/nvcc" -O2 -std=c++17 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
  --cudart static -I"$cuda/include" -o "$out/launch_cost" "$(dirname "$0")/launch_cost.cu" \
  -L"$cuda/lib64" -lcupti
echo "built $out/launch_cost"
