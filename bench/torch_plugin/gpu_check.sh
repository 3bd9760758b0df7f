#!/bin/bash
# Checks the torch plugin on a GPU machine against that machine's torch:
# builds libgpuscope_torch.so (and the libtorch sample trainer and the
# callback-cost bench) with the plugin's stand-alone CMake project
# (plugins/torch/standalone), so the machine needs only torch, CMake and a
# compiler; then records the samples with a gpuscope built elsewhere and prints
# what gpu_check.py measures.
#
#   bench/torch_plugin/gpu_check.sh GPUSCOPE_BIN_DIR [PYTHON] [OUT_DIR]
#
# GPUSCOPE_BIN_DIR holds bin/gpuscope and lib/libgpuscope_collector.so.
# DEBIAN_PLUGIN: a plugin built for another torch (default lib/libgpuscope_torch.so).
# GPU_CHECK_ARGS is passed to gpu_check.py (e.g. "--cases a,b --no-bench").
# BUILD_ONLY=1 stops after the build (the binaries are in /tmp/gpuscope_plugin_build/build).
set -u
BIN_DIR=$(cd "$1" && pwd)
PY=${2:-python3}
OUT=${3:-/tmp/gpuscope_gpu_check}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
WORK=/tmp/gpuscope_plugin_build
mkdir -p "$OUT" "$WORK"

TORCH_DIR=$("$PY" -c 'import torch; print(torch.utils.cmake_prefix_path)')/Torch
"$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpus", torch.cuda.device_count())'

echo "== build against $TORCH_DIR"
cmake -S "$SRC/plugins/torch/standalone" -B "$WORK/build" -DGPUSCOPE_SRC="$SRC" -DGPUSCOPE_PLUGIN_BENCH=ON \
  -DTorch_DIR="$TORCH_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$OUT/cmake.log" 2>&1 \
  || { tail -30 "$OUT/cmake.log"; exit 1; }
make -C "$WORK/build" -j"$(nproc)" >"$OUT/build.log" 2>&1 || { grep -E "error|Error" "$OUT/build.log" | head -30; exit 1; }
grep -E "warning" "$OUT/build.log" | grep -v "/torch/" | head -20
readelf -d "$WORK/build/libgpuscope_torch.so" | grep NEEDED
[ -n "${BUILD_ONLY:-}" ] && exit 0

echo "== callback cost (CPU, no collector)"
for env in "X=1" "GPUSCOPE_TORCH_SHAPES=0" "GPUSCOPE_TORCH_MEMORY=0"; do
  echo "-- $env"
  env $env "$WORK/build/callback_cost" 20000 31
done

echo "== recordings"
"$PY" "$SRC/bench/torch_plugin/gpu_check.py" --gpuscope "$BIN_DIR/bin/gpuscope" --python "$PY" \
  --plugin "$WORK/build/libgpuscope_torch.so" --trainer "$WORK/build/libtorch_trainer" \
  --samples "$SRC/samples" --out "$OUT" --debian-plugin "${DEBIAN_PLUGIN:-$BIN_DIR/lib/libgpuscope_torch.so}" \
  --callback-cost "$WORK/build/callback_cost" ${GPU_CHECK_ARGS:-}
