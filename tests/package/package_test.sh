#!/usr/bin/env bash
# The release archive used as a user would (issue 21): CPack makes the .tar.gz
# and the .deb from this build; the archive is unpacked into an empty folder and
# its gpuscope builds the torch plugin (`setup torch`), records a CPU training
# job, analyses, exports and renders it, with LD_LIBRARY_PATH empty and no file
# of the source tree (the job's script is copied out first). Every binary and
# library in it needs nothing newer than Ubuntu 22.04's glibc 2.35 and GCC 12's
# libstdc++, and links no SQLite or protobuf. The viewer without its Qt libraries
# says which it misses, in one line.
# Usage: package_test.sh BUILD_DIR SOURCE_DIR FAKE_VIEWER [PYTHON]
set -uo pipefail
BUILD=$1 SRC=$2 FAKE_VIEWER=$3 PY=${4:-/usr/bin/python3}
. "$(dirname "$0")/check_lib.sh" gpuscope_package

cpack --config "$BUILD/CPackConfig.cmake" -B "$WORK/pkg" > "$WORK/cpack.log" 2>&1 ||
  { tail -20 "$WORK/cpack.log"; echo "FAIL cpack"; exit 1; }
archive=$(ls "$WORK"/pkg/gpuscope-*-linux-x86_64.tar.gz)
deb=$(ls "$WORK"/pkg/gpuscope_*_amd64.deb)
echo "ok   cpack made $(basename "$archive") and $(basename "$deb")"

mkdir -p "$WORK/user" "$WORK/job"
tar -xzf "$archive" -C "$WORK/user"
top=$(ls "$WORK/user")
G=$WORK/user/$top/bin/gpuscope
check "the archive holds one folder gpuscope-X.Y.Z with bin/gpuscope" test "$top" = "$(basename "$archive" -linux-x86_64.tar.gz)" -a -x "$G"
# The README's links to the manuals resolve inside the archive.
doc=$WORK/user/$top/share/doc/gpuscope
missing_docs=$(grep -o '](docs/[^)#]*' "$doc/README.md" | cut -c3- | sort -u | while read -r d; do [ -f "$doc/$d" ] || echo "$d"; done)
check "the README's links to docs/ resolve in share/doc/gpuscope (missing: ${missing_docs:-none})" test -z "$missing_docs" -a -f "$doc/docs/rules.md"

# The job: the torch sample, copied out of the source tree.
cp "$SRC/samples/torch/train_mlp.py" "$SRC/samples/torch/sample_common.py" "$WORK/job/"
run() { (cd "$WORK/job" && env LD_LIBRARY_PATH= GPUSCOPE_CACHE_DIR="$WORK/cache" "$@"); }

check "setup torch builds the plugin from the archive's sources" run "$G" setup torch --python "$PY"
check "record a CPU training job" run "$G" record -o run.db -- "$PY" train_mlp.py --device cpu --steps 12 --warmup 0 --batch 16
ops=$("$PY" -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM op").fetchone()[0])' "$WORK/job/run.db" 2>&1)
check "the recording holds torch ops from the cached plugin ($ops)" test "$ops" -gt 0 2>/dev/null
check "analyze" run "$G" analyze run.db -o report.txt
check "export perfetto" run "$G" export run.db --perfetto trace.pftrace
check "export chrome and tensorboard" run "$G" export run.db --chrome trace.json.gz --tensorboard tb
if [ -x "$WORK/user/$top/bin/gpuscope-view" ]; then
  check "view --screenshot" run env QT_QPA_PLATFORM=offscreen "$G" view run.db --screenshot shot.png
  check "the screenshot is a PNG" bash -c "head -c 8 '$WORK/job/shot.png' | od -An -c | grep -q 'P   N   G'"
fi

# glibc and libstdc++ of Ubuntu 22.04; no SQLite or protobuf in ldd.
newest() { objdump -T "$1" | grep -o "$2_[0-9.]*" | sed "s/$2_//" | sort -V | tail -1; }
newer_than() { [ -n "$1" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -1)" != "$2" ]; }
while IFS= read -r f; do
  [ "$(head -c 4 "$f" | tail -c 3)" = ELF ] || continue
  name=${f#"$WORK/user/"}
  glibc=$(newest "$f" GLIBC) glibcxx=$(newest "$f" GLIBCXX)
  if newer_than "$glibc" 2.35 || newer_than "$glibcxx" 3.4.30; then
    echo "FAIL $name needs GLIBC_$glibc GLIBCXX_$glibcxx (Ubuntu 22.04: 2.35, 3.4.30)"; failed=1
  else
    echo "ok   $name needs GLIBC_${glibc:-none} GLIBCXX_${glibcxx:-none}"
  fi
  if ldd "$f" | grep -E "libsqlite3|libprotobuf"; then
    echo "FAIL $name links SQLite or protobuf dynamically"; failed=1
  fi
done < <(find "$WORK/user" -type f)

# The viewer without Qt: a stand-in linked against a library that is not there.
mkdir -p "$WORK/noqt/bin"
cp "$G" "$WORK/noqt/bin/gpuscope"
cp "$FAKE_VIEWER" "$WORK/noqt/bin/gpuscope-view"
(cd "$WORK/job" && LD_LIBRARY_PATH= "$WORK/noqt/bin/gpuscope" view run.db > "$WORK/noqt.out" 2>&1)
rc=$?
if [ $rc = 2 ] && [ "$(wc -l < "$WORK/noqt.out")" = 1 ] && grep -q "libdoctor_fake_qt.so" "$WORK/noqt.out"; then
  echo "ok   view without Qt says what it misses in one line"
else
  echo "FAIL view without Qt (exit $rc): $(cat "$WORK/noqt.out")"; failed=1
fi

# The .deb: the same files under /usr.
dpkg-deb -c "$deb" > "$WORK/deb.txt"
for f in ./usr/bin/gpuscope ./usr/lib/gpuscope/libgpuscope_collector.so ./usr/share/gpuscope/torch-plugin/; do
  if grep -q " $f" "$WORK/deb.txt"; then echo "ok   .deb has $f"; else echo "FAIL .deb lacks $f"; failed=1; fi
done
# Its gpuscope runs from where dpkg would put it (unpacked, not installed).
dpkg-deb -x "$deb" "$WORK/debroot"
check ".deb's gpuscope analyzes the archive's recording" env LD_LIBRARY_PATH= "$WORK/debroot/usr/bin/gpuscope" analyze "$WORK/job/run.db" -o "$WORK/deb_report.txt"
check ".deb's gpuscope finds its collector in /usr/lib/gpuscope" bash -c "env LD_LIBRARY_PATH= '$WORK/debroot/usr/bin/gpuscope' doctor --format json | grep -q 'debroot/usr/lib/gpuscope/libgpuscope_collector.so'"
dpkg-deb -f "$deb" Depends | grep -q "libc6 (>= 2.35)" && echo "ok   .deb depends on libc6 >= 2.35" ||
  { echo "FAIL .deb Depends: $(# Its gpuscope runs from where dpkg would put it (unpacked, not installed).
dpkg-deb -x "$deb" "$WORK/debroot"
check ".deb's gpuscope analyzes the archive's recording" env LD_LIBRARY_PATH= "$WORK/debroot/usr/bin/gpuscope" analyze "$WORK/job/run.db" -o "$WORK/deb_report.txt"
check ".deb's gpuscope finds its collector in /usr/lib/gpuscope" bash -c "env LD_LIBRARY_PATH= '$WORK/debroot/usr/bin/gpuscope' doctor --format json | grep -q 'debroot/usr/lib/gpuscope/libgpuscope_collector.so'"
dpkg-deb -f "$deb" Depends)"; failed=1; }
exit $failed
