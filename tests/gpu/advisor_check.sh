#!/usr/bin/env bash
# The advisor check on the GPU machine: every samples/advisor/<rule>.py is
# recorded plain and with --fixed, both recordings are analysed, and a table
# says, per rule: the top finding of the plain run, the estimated saving for the
# planted rule, the measured saving (mean step time plain minus fixed, both
# under recording), and pass/fail:
#   planted rule: it is the top finding, fixing it makes the step faster, and the
#                 estimate is within a factor of 2 of the measured saving;
#   healthy:      no finding above 5 % of step time.
# The plain recordings ($OUT/advisor_<rule>.db, small) are what tests/data/ takes.
#
# Usage (repository root, GPU machine):
#   GPUSCOPE=.carry/bin/gpuscope OUT=/tmp/gpuscope_advisor tests/gpu/advisor_check.sh [rule ...]
# GPUSCOPE needs the collector and, for steps, ops and allocator memory, the torch
# plugin built for this machine's torch (plugins/torch/README.md). Takes ~5 min on an H200.
set -uo pipefail
cd "$(dirname "$0")/../.."
GPUSCOPE=${GPUSCOPE:-$PWD/.carry/bin/gpuscope}
OUT=${OUT:-/tmp/gpuscope_advisor}
PY=${PYTHON:-python3}
LIMIT=${LIMIT:-150}  # seconds per recorded run
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
rules=${*:-"healthy dataloader-stall amp pageable-memcpy fusion launch-bound host-sync channels-last memory-pressure allocator-churn low-utilization sdpa copy-overlap recompile"}
start=$SECONDS

for rule in $rules; do
  name=advisor_${rule//-/_}
  for variant in plain fixed; do
    db=$OUT/$name.db flag=""
    if [ $variant = fixed ]; then db=$OUT/${name}_fixed.db flag=--fixed; fi
    t0=$SECONDS
    timeout -k 10 "$LIMIT" "$GPUSCOPE" record --force -o "$db" -- "$PY" "samples/advisor/$rule.py" $flag \
      > "${db%.db}.out" 2> "${db%.db}.err"
    rc=$?
    echo "recorded $rule $variant: rc=$rc, $((SECONDS - t0)) s: $(grep -h '^GPUSCOPE_SAMPLE' "${db%.db}.out" | cut -c1-160)"
    [ $rc -ne 0 ] && tail -5 "${db%.db}.err"
    "$GPUSCOPE" analyze "$db" --format json --force -o "${db%.db}.json" 2>> "${db%.db}.err" ||
      echo "analyze failed for $db: $(tail -1 "${db%.db}.err")"
  done
  "$GPUSCOPE" analyze "$OUT/$name.db" > "$OUT/$name.txt" 2>/dev/null
done

"$PY" - "$OUT" $rules <<'EOF'
import json, os, sys

out, rules = sys.argv[1], sys.argv[2:]

def sample(path):
    try:
        for line in open(path):
            if line.startswith("GPUSCOPE_SAMPLE "):
                r = json.loads(line[len("GPUSCOPE_SAMPLE "):])
                return 1000.0 * r["total_measured_s"] / r["steps"]  # mean ms per measured step
    except OSError:
        pass
    return None

def report(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None

rows, failed = [], 0
for rule in rules:
    name = "advisor_" + rule.replace("-", "_")
    plain, fixed = report(os.path.join(out, name + ".json")), report(os.path.join(out, name + "_fixed.json"))
    mp, mf = sample(os.path.join(out, name + ".out")), sample(os.path.join(out, name + "_fixed.out"))
    top = plain["findings"][0]["id"] if plain and plain["findings"] else "-"
    top_pct = plain["findings"][0]["saving_pct"] if plain and plain["findings"] else 0.0
    est = next((f["saving_ms_per_step"] for f in (plain or {}).get("findings", []) if f["id"] == rule), None)
    after = next((f["saving_ms_per_step"] for f in (fixed or {}).get("findings", []) if f["id"] == rule), 0.0)
    measured = mp - mf if mp is not None and mf is not None else None
    why = []
    if plain is None:
        why.append("no analysis")
    elif rule == "healthy":
        big = [f"{f['id']} {f['saving_pct']:.1f}%" for f in plain["findings"] if f["saving_pct"] > 5.0]
        if big:
            why.append("findings above 5%: " + ", ".join(big))
    else:
        if top != rule:
            why.append(f"top finding is {top}")
        if measured is None or measured <= 0:
            why.append("fix did not make the step faster")
        elif est is None:
            why.append("rule did not fire")
        elif not (0.5 <= est / measured <= 2.0):
            why.append(f"estimate/measured = {est / measured:.2f}")
    failed += bool(why)
    rows.append((rule, top, f"{top_pct:.1f}", "-" if est is None else f"{est:.3f}",
                 "-" if measured is None else f"{measured:.3f}", "-" if mp is None else f"{mp:.3f}",
                 "-" if mf is None else f"{mf:.3f}", f"{after:.3f}", "FAIL: " + "; ".join(why) if why else "pass"))

head = ("rule", "top finding", "top %", "est ms", "measured ms", "plain ms", "fixed ms", "est after fix", "result")
widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
for r in [head] + rows:
    print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)))
print(f"{len(rows) - failed} of {len(rows)} passed")
sys.exit(1 if failed else 0)
EOF
rc=$?
echo "advisor check: $((SECONDS - start)) s, recordings and reports in $OUT"
exit $rc
