#!/usr/bin/env bash
# The wheel used as a user would (issue 41): scripts/build_wheel.py packs this
# build; the wheel is installed with no network into a fresh venv of Debian's
# python (--system-site-packages, for Debian's torch), and the venv's
# `gpuscope` doctors, records a CPU training job (the torch plugin built on
# first use into the cache `setup torch` fills), says in one line when no
# compiler can build it, and the Python API marks steps (gpuscope.step),
# analyses (gpuscope.analyze) and profiles twice in one process
# (gpuscope.profile). The job scripts are copied out of the source tree.
# Usage: wheel_test.sh BUILD_DIR SOURCE_DIR [PYTHON]
set -uo pipefail
BUILD=$1 SRC=$2 PY=${3:-/usr/bin/python3}
. "$(dirname "$0")/check_lib.sh" gpuscope_wheel
py_checks() {  # the ok/FAIL lines of wheel_jobs.py, shown as they are
  "$@" 2>&1 | tee "$WORK/py.log" | grep -E '^(ok|FAIL) ' || true
  if ! grep -q '^ok ' "$WORK/py.log" || grep -q '^FAIL ' "$WORK/py.log"; then
    tail -20 "$WORK/py.log" | grep -vE '^(ok|FAIL) ' | sed 's/^/     /'
    failed=1
  fi
}

python3 "$SRC/scripts/build_wheel.py" --build "$BUILD" --out "$WORK/dist" > "$WORK/build_wheel.log" 2>&1 ||
  { cat "$WORK/build_wheel.log"; echo "FAIL build_wheel.py"; exit 1; }
wheel=$(tail -1 "$WORK/build_wheel.log")
grep '^build_wheel: tag' "$WORK/build_wheel.log"
echo "ok   build_wheel.py made $(basename "$wheel")"
# The tag names the glibc the files need (build_wheel.py, from objdump -T).
case $(basename "$wheel") in
  *-py3-none-manylinux_2_*_x86_64.whl|*-py3-none-linux_x86_64.whl) echo "ok   the platform tag is a Linux x86_64 one" ;;
  *) echo "FAIL unexpected wheel name $(basename "$wheel")"; failed=1 ;;
esac

mkdir -p "$WORK/job" "$WORK/nocc"
V=$WORK/venv
check "a fresh venv of $PY (--system-site-packages)" "$PY" -m venv --system-site-packages "$V"
check "pip install of the wheel file, no network" "$V/bin/python" -m pip install --no-index --no-cache-dir "$wheel"
G=$V/bin/gpuscope
check "the venv has a gpuscope command" test -x "$G"
cp "$SRC/samples/torch/train_mlp.py" "$SRC/samples/torch/sample_common.py" "$SRC/tests/package/wheel_jobs.py" "$WORK/job/"
# The venv as a user has it: activated (its bin first on PATH), LD_LIBRARY_PATH empty.
run() { (cd "$WORK/job" && env PATH="$V/bin:$PATH" LD_LIBRARY_PATH= GPUSCOPE_CACHE_DIR="$WORK/cache" "$@"); }

check "gpuscope --version is this build's" bash -c "[ \"\$('$G' --version)\" = \"\$('$BUILD/bin/gpuscope' --version)\" ]"
run "$G" doctor > "$WORK/doctor.out" 2>&1
check "doctor finds the wheel's collector" grep -q "^ok   collector: $V/lib/python3[0-9.]*/site-packages/gpuscope/_native/lib/gpuscope/libgpuscope_collector.so" "$WORK/doctor.out"
check "doctor checks the venv's torch" grep -q "torch 1\|torch: .*$V/bin/python" "$WORK/doctor.out"

# First record: the plugin is built on first use, into the cache setup torch fills.
run "$G" record -o run.db -- python train_mlp.py --device cpu --steps 12 --warmup 0 --batch 16 > "$WORK/record.out" 2>&1
rc=$?
check "record a CPU training job with the venv's gpuscope (exit $rc)" test $rc = 0
check "the first record builds the torch plugin" grep -q "first use with torch .*: building the torch plugin" "$WORK/record.out"
check "into the cache setup torch uses" bash -c "ls '$WORK'/cache/torch/*/libgpuscope_torch.so"
ops=$(sqlite3 "$WORK/job/run.db" "SELECT count(*) FROM op" 2>&1)
check "the recording holds torch ops ($ops)" test "$ops" -gt 0 2>/dev/null
run "$G" record -o run2.db -- python train_mlp.py --device cpu --steps 4 --warmup 0 --batch 16 > "$WORK/record2.out" 2>&1
check "a second record reuses the plugin (no build line)" bash -c "! grep -q 'building the torch plugin' '$WORK/record2.out'"
check "analyze" run "$G" analyze run.db -o report.txt
if ls "$V"/lib/python3*/site-packages/gpuscope/_native/bin/gpuscope-view > /dev/null 2>&1; then
  check "view --screenshot runs the wheel's viewer" run env QT_QPA_PLATFORM=offscreen "$G" view run.db --screenshot shot.png
fi

# No compiler: one clear line, and the job is still recorded (without ops).
ln -s "$V/bin/python" "$WORK/nocc/python"
(cd "$WORK/job" && env PATH="$V/bin:$WORK/nocc" CXX= LD_LIBRARY_PATH= GPUSCOPE_CACHE_DIR="$WORK/cache_nocc" \
  "$G" record -o nocc.db -- python train_mlp.py --device cpu --steps 4 --warmup 0 --batch 16) > "$WORK/nocc.out" 2>&1
rc=$?
check "without a compiler the job is still recorded (exit $rc)" test $rc = 0 -a -s "$WORK/job/nocc.db"
check "without a compiler one line says the plugin could not be built, and why" \
  bash -c "[ \$(grep -c 'the torch plugin could not be built, so this job is recorded without torch ops: .*\(cmake\|compiler\|c++\)' '$WORK/nocc.out') = 1 ]"
grep 'could not be built' "$WORK/nocc.out" | sed 's/^/     /'

# The Python API.
run "$G" record -o steps.db -- python wheel_jobs.py steps 40 > "$WORK/steps.out" 2>&1
check "record a loop that marks its steps with gpuscope.step()" test $? = 0
py_checks run python wheel_jobs.py check_steps steps.db 40
py_checks run python wheel_jobs.py job_pythons "$WORK/job"
py_checks run python wheel_jobs.py api_errors
py_checks run env GPUSCOPE_COLLECTOR="$(readlink -f /lib/x86_64-linux-gnu/libz.so.1)" python wheel_jobs.py no_capture_api "$WORK/job"
# gpuscope.profile needs the collector's capture API (issue 40, collector/ondemand_api.h).
collector=$(ls "$V"/lib/python3*/site-packages/gpuscope/_native/lib/gpuscope/libgpuscope_collector.so)
if nm -D --defined-only "$collector" | grep -q ' gpuscope_capture_start$'; then
  # In a job started by `record --on-demand` profile uses the collector already there;
  mkdir -p "$WORK/job/on_demand" "$WORK/job/attached"
  echo "     profile twice in a job started by gpuscope record --on-demand:"
  py_checks run "$G" record --on-demand -- python wheel_jobs.py notebook "$WORK/job/on_demand"
  # in any other Python (a notebook) it loads the wheel's collector and attaches it.
  echo "     profile twice in a plain python (the collector loaded and attached by profile):"
  py_checks run python wheel_jobs.py notebook "$WORK/job/attached"
else
  echo "ok   (the collector of this build has no capture API yet: profile's notebook checks not run;"
  echo "      without it profile raises the one-line error checked above)"
fi

if [ $failed = 0 ]; then echo "wheel: all checks passed"; else echo "wheel: FAILED"; fi
exit $failed
