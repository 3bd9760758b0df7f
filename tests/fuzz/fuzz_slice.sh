#!/bin/bash
# One slice of the fuzzing budget, as CI runs it (scripts/test.sh): a rotating
# subset of the libFuzzer targets, each fuzzed for FUZZ_SECONDS from its corpus
# in the repository, the targets of a slice side by side (one per core). What a
# run finds that adds coverage is merged back into the repository's corpus,
# the whole corpus minimised again (libFuzzer -merge=1), to be committed; a
# crash, leak or UB report fails the run and leaves its reproducer in
# BUILD_FUZZ_DIR/fuzz_slice/artifacts.
#
#   tests/fuzz/fuzz_slice.sh BUILD_FUZZ_DIR
#   FUZZ_SECONDS=600    seconds per target (default 600)
#   FUZZ_PARALLEL=N     targets per slice, at once (default: the cores, at most all targets)
#   FUZZ_SLICE=K        which slice (default: the commit count, or the hour in a shallow clone)
#   FUZZ_TARGETS="import budget"   fuzz these instead of a rotating slice
#   FUZZ_GROW=0         leave the repository's corpus as it is
#   FUZZ_FOUND=DIR      also merge DIR/<target>/ in (inputs of a run elsewhere);
#                       with FUZZ_SECONDS=0 only that, no fuzzing
#
# The budget: one hour per target in slices. With 2 cores a slice is 2 of the
# 4 targets for 10 minutes each, so every target gets an hour in 12 CI runs;
# with 4 cores, in 6. CI spends FUZZ_SECONDS plus the merges (under a minute).
set -euo pipefail
BUILD=${1:?usage: tests/fuzz/fuzz_slice.sh BUILD_FUZZ_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
SECONDS_EACH=${FUZZ_SECONDS:-600}
GROW=${FUZZ_GROW:-1}

# target -> its corpus folder (tests/fuzz/README.md)
ALL=(import recording budget text_args)
corpus_of() {
  case $1 in
    import) echo "$HERE/corpus" ;;
    *) echo "$HERE/$1_corpus" ;;
  esac
}

if [ -n "${FUZZ_TARGETS:-}" ]; then
  read -r -a chosen <<< "$FUZZ_TARGETS"
else
  n=${FUZZ_PARALLEL:-$(nproc)}
  (( n < 1 )) && n=1
  (( n > ${#ALL[@]} )) && n=${#ALL[@]}
  # The commit count moves on with every commit; a shallow clone (CI's often
  # is) has none worth counting, so there the slice changes every hour.
  if [ -n "${FUZZ_SLICE:-}" ]; then
    slice=$FUZZ_SLICE
  elif [ "$(git -C "$HERE" rev-parse --is-shallow-repository 2>/dev/null)" = false ]; then
    slice=$(git -C "$HERE" rev-list --count HEAD)
  else
    slice=$(( $(date -u +%s) / 3600 ))
  fi
  chosen=()
  for ((i = 0; i < n; ++i)); do chosen+=("${ALL[$(( (slice * n + i) % ${#ALL[@]} ))]}"); done
fi
for t in "${chosen[@]}"; do
  [ -x "$BUILD/bin/${t}_fuzzer" ] || { echo "fuzz_slice: no $BUILD/bin/${t}_fuzzer (build it with -DGPUSCOPE_FUZZ=ON)" >&2; exit 2; }
done
if (( SECONDS_EACH > 0 )); then
  echo "fuzz_slice: ${chosen[*]}, ${SECONDS_EACH} s each, side by side"
else
  echo "fuzz_slice: ${chosen[*]}: no fuzzing, merging ${FUZZ_FOUND:-nothing} in"
fi

WORK=$BUILD/fuzz_slice
rm -rf "$WORK"
mkdir -p "$WORK/artifacts"
pids=()
for t in "${chosen[@]}"; do
  mkdir -p "$WORK/$t"
  (( SECONDS_EACH > 0 )) || continue
  # New inputs go to the scratch folder (first); the repository's corpus is only read.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 \
    "$BUILD/bin/${t}_fuzzer" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 \
    -artifact_prefix="$WORK/artifacts/${t}-" "$WORK/$t" "$(corpus_of "$t")" > "$WORK/$t.log" 2>&1 &
  pids+=($!)
done
failed=()
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed+=("${chosen[$i]}")
done
(( SECONDS_EACH > 0 )) && for t in "${chosen[@]}"; do
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/$t.log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$WORK/$t.log" | tail -1 | cut -d' ' -f2 || true)
  echo "fuzz_slice: ${t}_fuzzer: ${runs:-?} runs, coverage ${cov:-?} edges"
done
if (( ${#failed[@]} )); then
  for t in "${failed[@]}"; do
    echo "fuzz_slice: ${t}_fuzzer FAILED; the end of its log ($WORK/$t.log):" >&2
    tail -n 40 "$WORK/$t.log" >&2
    ls "$WORK/artifacts/${t}-"* 2>/dev/null | sed 's/^/fuzz_slice: reproducer: /' >&2 || true
  done
  exit 1
fi

# Inputs libFuzzer added are named by their SHA-1; every other file is a
# hand-written seed or a crash reproducer, kept as it is.
found_by_fuzzer() { [[ $(basename "$1") =~ ^[0-9a-f]{40}$ ]]; }

if [ "$GROW" = 1 ]; then
  for t in "${chosen[@]}"; do
    dir=$(corpus_of "$t")
    # Minimised as a whole: the seeds first, then of what fuzzing found, before
    # and now, only the inputs that cover something the rest does not.
    out=$WORK/$t.merged found=$WORK/$t.found
    mkdir -p "$out" "$found"
    old=0
    for f in "$dir"/*; do
      if found_by_fuzzer "$f"; then cp "$f" "$found/"; old=$((old + 1)); else cp "$f" "$out/"; fi
    done
    extra=()
    [ -n "${FUZZ_FOUND:-}" ] && [ -d "$FUZZ_FOUND/$t" ] && extra=("$FUZZ_FOUND/$t")
    "$BUILD/bin/${t}_fuzzer" -merge=1 -rss_limit_mb=2048 -timeout=20 "$out" "$found" "$WORK/$t" "${extra[@]}" \
      > "$WORK/$t.merge.log" 2>&1 || {
      echo "fuzz_slice: merging ${t}'s inputs failed:" >&2
      tail -n 20 "$WORK/$t.merge.log" >&2
      exit 1
    }
    for f in "$dir"/*; do found_by_fuzzer "$f" && rm "$f"; done
    now=0
    for f in "$out"/*; do
      if found_by_fuzzer "$f"; then cp "$f" "$dir/"; now=$((now + 1)); fi
    done
    echo "fuzz_slice: ${t}: $now inputs found by fuzzing in ${dir#"$(dirname "$(dirname "$HERE")")"/} (were $old; commit the change)"
  done
fi
