#!/usr/bin/env bash
# Issue 21 on the GPU machine: the release archive built on the CPU machine
# (.carry/gpuscope-*-linux-x86_64.tar.gz) unpacked into an empty folder and used
# with no file of the source tree: `gpuscope doctor` passes, `gpuscope setup
# torch` builds the plugin against this machine's torch (twice: the second
# reuses it), and a CUDA training job is recorded with ops linked to kernels.
# Results: $OUT/package/{doctor.txt,setup.txt,setup_again.txt,record.txt,check.txt}.
# Usage (GPU machine, repository root): OUT=/tmp/out tests/gpu/package_check.sh [PYTHON]
set -uo pipefail
cd "$(dirname "$0")/../.."
PY=${1:-python3}
R=${OUT:-/tmp/gpuscope_gpu_out}/package
mkdir -p "$R"
archive=$(ls "$PWD"/.carry/gpuscope-*-linux-x86_64.tar.gz 2>/dev/null | head -1)
[ -n "$archive" ] || { echo "package_check: no .carry/gpuscope-*-linux-x86_64.tar.gz" | tee "$R/check.txt"; exit 1; }
W=$(mktemp -d /tmp/gpuscope_user.XXXXXX)
mkdir -p "$W/job"
tar -xzf "$archive" -C "$W"
G=$(ls -d "$W"/gpuscope-*/)bin/gpuscope
cp samples/torch/train_mlp.py samples/torch/sample_common.py "$W/job/"
cd "$W/job" || exit 1
export GPUSCOPE_CACHE_DIR=$W/cache LD_LIBRARY_PATH=
status=0
step() {  # step NAME command...: output to $R/NAME.txt, rc line
  local name=$1
  shift
  local t0=$SECONDS
  "$@" > "$R/$name.txt" 2>&1
  local rc=$?
  echo "$name: rc=$rc in $((SECONDS - t0)) s" | tee -a "$R/check.txt"
  tail -12 "$R/$name.txt"
  [ $rc = 0 ] || status=1
}
# Before `setup torch` doctor must fail on the plugin alone (and say to run it).
"$G" doctor --python "$(command -v "$PY")" > "$R/doctor_before.txt" 2>&1
fails=$(grep -c "^FAIL" "$R/doctor_before.txt")
if [ "$fails" = 1 ] && grep -q "^FAIL torch: .*run \`gpuscope setup torch" "$R/doctor_before.txt"; then
  echo "doctor_before: fails on the missing plugin only, and says to run setup torch" | tee -a "$R/check.txt"
else
  echo "doctor_before: FAIL ($fails failed checks)" | tee -a "$R/check.txt"; status=1
fi
tail -8 "$R/doctor_before.txt"
step setup "$G" setup torch --python "$(command -v "$PY")"
step setup_again "$G" setup torch --python "$(command -v "$PY")"
step doctor_after "$G" doctor --python "$(command -v "$PY")"
step record "$G" record -o run.db -- "$PY" train_mlp.py --device cuda --steps 30
step analyze "$G" analyze run.db -o report.txt
"$PY" - run.db <<'PY' 2>&1 | tee -a "$R/check.txt"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
n = {t: c.execute(f"select count(*) from {t}").fetchone()[0] for t in ("kernel", "op", "external_correlation")}
linked = c.execute("""select count(*) from kernel k join external_correlation x
                      on x.pid = k.pid and x.correlation = k.correlation
                      join op o on o.external_id = x.external_id and o.pid = k.pid""").fetchone()[0]
share = linked / n["kernel"] if n["kernel"] else 0
print("tables:", n, "kernels linked to ops: %d (%.1f%%)" % (linked, 100 * share))
print("ops linked to kernels:", "ok" if share > 0.9 else "FAIL")
sys.exit(0 if share > 0.9 else 1)
PY
[ "${PIPESTATUS[0]}" = 0 ] || status=1
cp report.txt "$R/" 2>/dev/null
rm -rf "$W"
echo "package_check: $([ $status = 0 ] && echo ok || echo FAIL)" | tee -a "$R/check.txt"
exit $status
