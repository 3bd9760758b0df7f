#!/usr/bin/env bash
# `gpuscope diff` on the GPU machine. Records, then checks exit codes:
#   train_mlp.py twice (same configuration)                   -> diff exit 0
#   diff_train.py twice (same configuration)                  -> diff exit 0
#   diff_train.py against --slow-sin 25 (one kernel k x slower) -> diff exit 1,
#       and the first kernel named is the sin kernel
#   the same three under torch.profiler, diffed as traces      -> 0, 0, 1 + sin first
# Writes reports, logs and the diff_train recordings (fixtures for
# tests/data/) to $OUT. Expects the binaries like run_all.sh: .carry/bin/gpuscope
# and .carry/lib/libgpuscope_collector.so (+ the torch plugin for this torch),
# or GS=/path/to/gpuscope.
# Usage (on the GPU machine): OUT=/some/dir tests/gpu/diff_check.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gpuscope_diff_out}
W=/tmp/gpuscope_diff_work
GS=${GS:-$PWD/.carry/bin/gpuscope}
STEPS=${STEPS:-40}
mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1
failures=0
log() { echo "=== $* ($(date +%T))"; }

record() {  # record NAME script args...
  local name=$1; shift
  timeout 300 "$GS" record --force -o "$W/$name.db" -- python3 "$@" 2>"$W/$name.record.err" | tail -1
  local rc=${PIPESTATUS[0]}
  echo "record $name rc=$rc"; [ $rc -eq 0 ] || { tail -5 "$W/$name.record.err"; failures=$((failures + 1)); }
}

profile() {  # profile NAME script args...: a torch.profiler trace, no gpuscope
  local name=$1; shift
  timeout 300 python3 "$@" --profile "$W/$name.json" 2>"$W/$name.err" | tail -1
  local rc=${PIPESTATUS[0]}
  echo "profile $name rc=$rc"; [ $rc -eq 0 ] || { tail -5 "$W/$name.err"; failures=$((failures + 1)); }
  gzip -f "$W/$name.json"
}

# expect WANT NAME BASE NEW [needle]: diff, check the exit code and that the
# first kernel named (JSON kernels[0]) contains the needle.
expect() {
  local want=$1 name=$2 base=$3 new=$4 needle=${5:-}
  "$GS" diff "$base" "$new" --force --json "$OUT/$name.json" --markdown "$OUT/$name.md" \
    --junit "$OUT/$name.junit.xml" --html "$OUT/$name.html" > "$OUT/$name.txt" 2> "$OUT/$name.err"
  local rc=$?
  head -3 "$OUT/$name.txt"; cat "$OUT/$name.err"
  if [ $rc -eq "$want" ]; then echo "ok   $name: exit $rc"; else echo "FAIL $name: exit $rc, expected $want"; failures=$((failures + 1)); fi
  if [ -n "$needle" ] && [ -s "$OUT/$name.json" ]; then
    if python3 - "$OUT/$name.json" "$needle" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
first = d["kernels"][0] if d["kernels"] else {}
name = first.get("name", "")
print("first kernel: %s %s %+.3f ms/step (%s)" % (first.get("status"), name[:110], first.get("delta_ms_per_step", 0), d["headline"]))
sys.exit(0 if sys.argv[2] in name else 1)
PY
    then echo "ok   $name: first kernel names '$needle'"
    else echo "FAIL $name: first kernel does not name '$needle'"; failures=$((failures + 1)); fi
  fi
}

log env
nvidia-smi -L; python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
"$GS" --version

log record
record mlp_a samples/torch/train_mlp.py --steps 60
record mlp_b samples/torch/train_mlp.py --steps 60
record dt_base regress/samples/diff_train.py --steps "$STEPS"
record dt_rerun regress/samples/diff_train.py --steps "$STEPS"
record dt_slow regress/samples/diff_train.py --steps "$STEPS" --slow-sin 25
grep -h "diff_train:" "$W"/dt_slow.record.err

log diff recordings
# train_mlp twice is informative only: a DataLoader-bound Python loop can run
# 20 % slower in its second process by its own clock (H200, 2026-12-02), and then
# the diff is right to say so. The gate's same-configuration check is diff_train.
"$GS" diff "$W/mlp_a.db" "$W/mlp_b.db" --force --json "$OUT/mlp_same.json" > "$OUT/mlp_same.txt" 2>&1
echo "info mlp_same: exit $? ($(head -2 "$OUT/mlp_same.txt" | tail -1))"
expect 0 dt_same "$W/dt_base.db" "$W/dt_rerun.db"
expect 1 dt_slow "$W/dt_base.db" "$W/dt_slow.db" sin_kernel
expect 0 dt_slow_reversed_is_faster "$W/dt_slow.db" "$W/dt_base.db"

log diff torch.profiler traces
profile tp_base regress/samples/diff_train.py --steps 20
profile tp_rerun regress/samples/diff_train.py --steps 20
# Under torch.profiler the loop is CPU-bound (~2.3 ms a step): 25x moved the step only
# +2.8 % on the H200, so the profiled variant slows the kernel further.
profile tp_slow regress/samples/diff_train.py --steps 20 --slow-sin 100
expect 0 tp_same "$W/tp_base.json.gz" "$W/tp_rerun.json.gz"
expect 1 tp_slow "$W/tp_base.json.gz" "$W/tp_slow.json.gz" sin_kernel

log check
echo '{"max_step_ms_median": 100000, "forbid_findings": ["pageable-memcpy"]}' > "$W/budget_loose.json"
echo '{"max_step_ms_median": 0.001}' > "$W/budget_tight.json"
"$GS" check "$W/dt_base.db" --budget "$W/budget_loose.json"; rc=$?
[ $rc -eq 0 ] && echo "ok   check loose: exit 0" || { echo "FAIL check loose: exit $rc"; failures=$((failures + 1)); }
"$GS" check "$W/dt_base.db" --budget "$W/budget_tight.json" > /dev/null; rc=$?
[ $rc -eq 1 ] && echo "ok   check tight: exit 1" || { echo "FAIL check tight: exit $rc"; failures=$((failures + 1)); }

log fixtures
for f in dt_base dt_rerun dt_slow; do
  [ -f "$W/$f.db" ] && cp "$W/$f.db" "$OUT/diff_${f#dt_}_h200.db"
done
ls -la "$OUT"
log "done: $failures failure(s)"
[ $failures -eq 0 ]
