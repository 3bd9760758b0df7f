#!/usr/bin/env bash
# `gpuscope setup torch` end to end with Debian's torch (CPU CI): without a
# compiler it says so in one line; it builds the plugin into the cache (which
# already holds one for an older torch, as after an upgrade, and says so); a
# second run reuses it; a torch job recorded by a collector with no plugin next
# to it gets its ops from the cached plugin.
# Usage: setup_torch_test.sh GPUSCOPE COLLECTOR SOURCE_DIR PYTHON
set -uo pipefail
G=$1 COLLECTOR=$2 SRC=$3 PY=$4
W=$(mktemp -d /tmp/gpuscope_setup.XXXXXX)
trap 'rm -rf "$W"' EXIT
failed=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failed=1; }

# No compiler: a PATH with python and cmake only.
mkdir -p "$W/bin"
ln -s "$PY" "$W/bin/python3"
ln -s "$(command -v cmake)" "$W/bin/cmake"
env -i HOME="$W" PATH="$W/bin" GPUSCOPE_CACHE_DIR="$W/cache" "$G" setup torch > "$W/nocc.out" 2>&1
rc=$?
if [ $rc != 0 ] && [ "$(grep -c . "$W/nocc.out")" = 2 ] && grep -q "no C++ compiler" "$W/nocc.out" &&
   grep -q "recorded without torch ops" "$W/nocc.out" && [ ! -e "$W/cache/torch" -o -z "$(ls "$W/cache/torch")" ]; then
  ok "without a compiler: exit $rc, one error line (after the torch line), nothing in the cache"
else
  fail "without a compiler (exit $rc):"; cat "$W/nocc.out"
fi

# An older torch's plugin already in the cache.
mkdir -p "$W/cache/torch/0.0.1"
echo "stands in for a plugin of torch 0.0.1" > "$W/cache/torch/0.0.1/libgpuscope_torch.so"
export GPUSCOPE_CACHE_DIR=$W/cache
"$G" setup torch --python "$PY" > "$W/build.out" 2>&1
rc=$?
version=$("$PY" -c 'import torch; print(torch.__version__)')
plugin=$W/cache/torch/$version/libgpuscope_torch.so
if [ $rc = 0 ] && [ -s "$plugin" ] && grep -q "also holds plugins for torch 0.0.1" "$W/build.out" && grep -q "^gpuscope setup torch: built $plugin" "$W/build.out"; then
  ok "built $plugin; noticed the plugin for torch 0.0.1"
else
  fail "build (exit $rc):"; cat "$W/build.out"
fi
if ls -a "$W/cache/torch" | grep -q '^\.build'; then fail "a build folder was left in the cache"; fi

"$G" setup torch --python "$PY" > "$W/again.out" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q "reusing $plugin" "$W/again.out" && ! grep -q "compiling" "$W/again.out"; then
  ok "the second run reuses the plugin"
else
  fail "second run (exit $rc):"; cat "$W/again.out"
fi

# The collector alone in a folder: the plugin comes from the cache.
mkdir -p "$W/lib"
cp "$COLLECTOR" "$W/lib/"
(cd "$W" && GPUSCOPE_COLLECTOR="$W/lib/$(basename "$COLLECTOR")" "$G" record -o run.db -- "$PY" \
  "$SRC/samples/torch/train_mlp.py" --device cpu --steps 6 --warmup 0 --batch 16 > record.out 2>&1)
ops=$("$PY" -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM op").fetchone()[0])' "$W/run.db" 2>&1)
if [ "$ops" -gt 0 ] 2>/dev/null; then ok "a job recorded with no plugin beside the collector has $ops ops"; else fail "recorded ops: $ops"; cat "$W/record.out"; fi
exit $failed
