#!/usr/bin/env python3
"""The what-if replay's scorecard on the shared ground truth (docs/rules.md, "Scorecard").

usage: scorecard.py GPUSCOPE KIT_DIR WORK_DIR [--json OUT] [--only NAME,...] [--no-goals]
                    [--floor IDENTITY,SAVINGS,HARMFUL,TOP]

KIT_DIR holds NAME.db.zst recordings made with `record`'s defaults and fixes.jsonl, every fix timed
without gpuscope on the same models (shared/ground-truth/*/README.md). Each recording is
decompressed into WORK_DIR (once), analysed with --what-if for every timed combination, and
compared with what was measured:
  identity   the replay with tracing's cost taken off against the job's untraced step (within 5 %)
  savings    every fix or combination measured to save >= 5 %: predicted within 1.25x
  harmful    no fix the report recommends (plan or finding) was measured slower
  top        the top finding's fix is the best measured fix, wherever that fix was timed
Exit 0 when every goal holds, 1 when one does not (with --no-goals: 0 unless the run itself failed;
with --floor: 0 while the counts are no worse than the floor given, e.g. 10,9,4,10 = identity on at
least 10 models, at least 9 savings within range, at most 4 harmful recommendations, the top finding
right on at least 10: a ratchet, so the test fails on a regression while the goals are not all met),
77 when the kit is absent (ctest's SKIP_RETURN_CODE)."""
import json
import os
import subprocess
import sys
import time

# The kit's variant names -> the what-if's fix ids. `graphs` is torch.compile(mode="reduce-overhead"):
# inductor's fusion and CUDA graphs together.
VARIANT_FIXES = {
    "amp": ["amp"],
    "cl": ["channels-last"],
    "fused": ["fused-optimizer"],
    "compile": ["compile"],
    "graphs": ["compile", "cuda-graphs"],
    "nosync": ["host-sync"],
    "workers": ["dataloader-stall"],
}
IDENTITY_PCT = 5.0
MIN_SAVING_PCT = 5.0
WITHIN = 1.25
# A fix measured to slow the job by more than this is harmful to recommend (the timings'
# own spread is about 1 %: the kit's README).
SLOWER_PCT = -1.0


def fixes_of(variant):
    out = []
    for part in variant.split("+"):
        for f in VARIANT_FIXES[part]:
            if f not in out:
                out.append(f)
    return out


def decompress(kit, name, work):
    src = os.path.join(kit, name)
    dst = os.path.join(work, name[: -len(".zst")])
    if not os.path.exists(dst) or os.path.getmtime(dst) < os.path.getmtime(src):
        tmp = dst + ".part"
        subprocess.run(["zstd", "-q", "-d", "-f", src, "-o", tmp], check=True)
        os.chmod(tmp, 0o644)
        os.replace(tmp, dst)
    return dst


def analyze(gpuscope, db, combos):
    cmd = [gpuscope, "analyze", "--format", "json"]
    for c in combos:
        cmd += ["--what-if", "+".join(c)]
    cmd += ["--", db]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{db}: gpuscope analyze exited {r.returncode}: {r.stderr.strip()[:400]}")
    return json.loads(r.stdout)


def predicted_saving(report, fixes):
    w = report["whatif"]
    if len(fixes) == 1:
        for p in w.get("fixes", []):
            if p["fix"] == fixes[0]:
                return p["saving_pct"] if p.get("applies") else None, p.get("why_not", "")
    for q in w.get("asked", []):
        if q["asked"] == fixes:
            if q.get("skipped"):
                return None, "does not apply: " + ",".join(q["skipped"])
            return q["saving_pct"], ""
    return None, "not priced"


def recommended(report):
    """Fix ids the report tells the user to apply: the plan's and the findings' with a replayed fix."""
    out = set()
    for step in report["whatif"].get("plan", []):
        out.update(step["fixes"])
    for f in report.get("findings", []):
        if f.get("fix_id"):
            out.add(f["fix_id"])
    return out


def score_model(gpuscope, kit, work, entry):
    name = entry["model"]
    db = decompress(kit, entry["recording"], work)
    measured = entry["saving_pct"]
    combos = [fixes_of(v) for v in measured if len(fixes_of(v)) > 1]
    t0 = time.time()
    report = analyze(gpuscope, db, combos)
    w = report["whatif"]
    row = {"model": name, "seconds": round(time.time() - t0, 1), "available": w.get("available", False)}
    if not row["available"]:
        row["why"] = w.get("why", "")
        return row
    row["identity_pct"] = w["identity_error_pct"]
    row["job_ms"] = w["job_step_ms"]
    row["replay_ms"] = w["replay_ms"]
    row["plain_ms"] = entry.get("plain_ms")
    row["tracing_us"] = w.get("tracing_cost_per_call_us")
    row["fixes"] = []
    for variant, m in measured.items():
        p, why = predicted_saving(report, fixes_of(variant))
        row["fixes"].append({"variant": variant, "fixes": fixes_of(variant), "measured": m, "predicted": p, "why_not": why})
    rec = recommended(report)
    row["recommended"] = sorted(rec)
    row["harmful"] = [f["variant"] for f in row["fixes"]
                      if len(f["fixes"]) == 1 and f["fixes"][0] in rec and f["measured"] < SLOWER_PCT]
    findings = report.get("findings", [])
    row["top_finding"] = findings[0]["id"] if findings else None
    row["top_fix"] = findings[0].get("fix_id") if findings else None
    singles = [f for f in row["fixes"] if len(f["fixes"]) == 1]
    best = max(singles, key=lambda f: f["measured"]) if singles else None
    row["best_fix"] = best["fixes"][0] if best and best["measured"] >= MIN_SAVING_PCT else None
    timed = {f["fixes"][0] for f in singles}
    top_fix = row["top_fix"]
    if top_fix == "cuda-graphs":  # timed only with inductor (`graphs`): judged as that variant
        top_fix = None
    row["top_ok"] = (top_fix not in timed) or row["best_fix"] is None or top_fix == row["best_fix"]
    if row["best_fix"] and top_fix is None and row["top_fix"] is None:
        row["top_ok"] = False  # the best fix saves >= 5 % and the report has no finding at all
    row["plan"] = ["+".join(s["fixes"]) + f" {s['saving_pct']:.1f}" for s in w.get("plan", [])]
    return row


SAME_SPEED_PCT = 10.0


def same_speed(row, entries):
    """Whether every timing run's model as written ran within SAME_SPEED_PCT of the recording's
    machine start (its plain step, else the job's step analyze found)."""
    entry = next(e for e in entries if e["model"] == row["model"])
    ref = entry.get("plain_ms") or row.get("job_ms")
    runs = list((entry.get("as_written_ms") or {}).values())
    return bool(ref) and all(abs(v / ref - 1) * 100 <= SAME_SPEED_PCT for v in runs)


def ratio_ok(pred, meas):
    if pred is None or pred <= 0:
        return False
    r = pred / meas
    return 1 / WITHIN <= r <= WITHIN


def main():
    args = sys.argv[1:]
    if len(args) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    gpuscope, kit, work = args[:3]
    out_json, only, goals, floor = None, None, True, None
    rest = args[3:]
    while rest:
        a = rest.pop(0)
        if a == "--json":
            out_json = rest.pop(0)
        elif a == "--only":
            only = set(rest.pop(0).split(","))
        elif a == "--no-goals":
            goals = False
        elif a == "--floor":
            floor = [int(x) for x in rest.pop(0).split(",")]
    fixes_file = os.path.join(kit, "fixes.jsonl")
    if not os.path.isfile(fixes_file):
        print(f"scorecard: skipped: no ground-truth kit at {kit} (fixes.jsonl missing); "
              "it lives in the workplace's shared/ground-truth/, beside the checkout", file=sys.stderr)
        return 77
    os.makedirs(work, exist_ok=True)
    entries = [json.loads(l) for l in open(fixes_file) if l.strip()]
    rows = []
    for e in entries:
        if only and e["model"] not in only:
            continue
        rows.append(score_model(gpuscope, kit, work, e))
        r = rows[-1]
        print(f"  {r['model']}: analysed in {r['seconds']} s", file=sys.stderr, flush=True)

    print(f"{'model':10} {'identity':>9} {'job ms':>8} {'plain':>8}  top finding -> best measured")
    n_ident = 0
    for r in rows:
        if not r["available"]:
            print(f"{r['model']:10} unavailable: {r['why']}")
            continue
        ok = abs(r["identity_pct"]) <= IDENTITY_PCT
        n_ident += ok
        plain = f"{r['plain_ms']:.2f}" if r.get("plain_ms") else "-"
        print(f"{r['model']:10} {r['identity_pct']:+8.1f}%{'' if ok else '!'} {r['job_ms']:8.2f} {plain:>8}  "
              f"{r['top_fix'] or r['top_finding'] or '-'} -> {r['best_fix'] or '-'}{'' if r['top_ok'] else '  MISS'}")
    print()
    print(f"{'model':10} {'variant':14} {'measured':>9} {'predicted':>10}  verdict")
    n_big = n_big_ok = 0
    for r in rows:
        for f in r.get("fixes", []):
            big = f["measured"] >= MIN_SAVING_PCT
            verdict = ""
            if big:
                n_big += 1
                if ratio_ok(f["predicted"], f["measured"]):
                    n_big_ok += 1
                    verdict = "within 1.25x"
                else:
                    verdict = "MISS"
            pred = "-" if f["predicted"] is None else f"{f['predicted']:.1f}"
            if f["predicted"] is None and f["why_not"]:
                verdict = (verdict + " " if verdict else "") + f"({f['why_not'][:60]})"
            print(f"{r['model']:10} {f['variant']:14} {f['measured']:9.1f} {pred:>10}  {verdict}")
    # The kit's CPU-paced models ran at different speeds in the fixes' machine starts than in
    # the recording's: a saving measured on a faster CPU is another job's. Counted apart.
    steady_rows = {r["model"] for r in rows if same_speed(r, entries)}
    n_same = sum(1 for r in rows if r["model"] in steady_rows for f in r.get("fixes", [])
                 if f["measured"] >= MIN_SAVING_PCT)
    n_same_ok = sum(1 for r in rows if r["model"] in steady_rows for f in r.get("fixes", [])
                    if f["measured"] >= MIN_SAVING_PCT and ratio_ok(f["predicted"], f["measured"]))
    harmful = [(r["model"], v) for r in rows for v in r.get("harmful", [])]
    top_miss = [r["model"] for r in rows if r.get("available") and not r["top_ok"]]
    avail = [r for r in rows if r.get("available")]
    print()
    print(f"identity within {IDENTITY_PCT:.0f} %: {n_ident}/{len(rows)}")
    print(f"savings >= {MIN_SAVING_PCT:.0f} % predicted within {WITHIN}x: {n_big_ok}/{n_big}")
    print(f"  of them on models whose fixes were timed at the recording's speed (as written within "
          f"{SAME_SPEED_PCT:.0f} % of its plain step): {n_same_ok}/{n_same}; other models: "
          f"{', '.join(sorted(r['model'] for r in rows if r['model'] not in steady_rows)) or 'none'}")
    print(f"recommended but measured slower: {len(harmful)}" + (f" ({', '.join(m + ' ' + v for m, v in harmful)})" if harmful else ""))
    print(f"top finding = best measured fix: {len(avail) - len(top_miss)}/{len(avail)}" +
          (f" (missed: {', '.join(top_miss)})" if top_miss else ""))
    if out_json:
        with open(out_json, "w") as fh:
            json.dump({"rows": rows, "identity_ok": n_ident, "savings_ok": n_big_ok, "savings": n_big,
                       "savings_same_speed_ok": n_same_ok, "savings_same_speed": n_same,
                       "harmful": harmful, "top_miss": top_miss}, fh, indent=1)
    met = n_ident == len(rows) and n_big_ok == n_big and not harmful and not top_miss
    if floor and not met:
        n_top = len(avail) - len(top_miss)
        worse = n_ident < floor[0] or n_big_ok < floor[1] or len(harmful) > floor[2] or n_top < floor[3]
        print(f"scorecard: goals not met; floor {','.join(map(str, floor))}: "
              f"{'WORSE than the floor' if worse else 'held'}", file=sys.stderr)
        return 1 if worse else 0
    if goals and not met:
        print("scorecard: goals not met", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
