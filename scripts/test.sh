#!/usr/bin/env bash
# Set-up command 2: installs what is missing, builds, and runs every test (CPU only).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/configure.sh -DGPUSCOPE_WERROR=ON
# The libFuzzer targets (clang, ASan + UBSan) in their own small build: the
# torch.profiler importer, the readers (analysis, exports, diff and check of odd
# recordings), `gpuscope check`'s budget parser and the option text parsers.
# Each run fuzzes a rotating slice of them, 10 minutes each, side by side
# (tests/fuzz/fuzz_slice.sh: an hour per target over 6-12 runs), and merges what
# adds coverage into their corpus. A crash, leak or UB report fails the run.
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DGPUSCOPE_FUZZ=ON -DGPUSCOPE_WITH_CUDA=OFF -DGPUSCOPE_WITH_TORCH=OFF -DGPUSCOPE_WITH_GUI=OFF > build-fuzz.log
cmake --build build-fuzz -j"$(nproc)" --target import_fuzzer recording_fuzzer budget_fuzzer text_args_fuzzer >> build-fuzz.log
tests/fuzz/fuzz_slice.sh build-fuzz
cd build
ctest --output-on-failure -j"$(nproc)"
