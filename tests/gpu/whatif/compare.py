"""The what-if advisor against fixes measured without gpuscope (issue 38's checks).

For each model with both a recording (r/rec/<model>_<i>.db.zst) and timings
(r/timings.jsonl): `gpuscope analyze --format json --what-if <every measured
combination>` on each recording, then per model:
  identity   the replay with tracing's cost taken off against the untraced step
             the recording measured (within 5 %), and against the plain step
             time_fixes measured in another process
  top        the top finding's fix is the measured fix that saves most (a fix
             alone); a top finding without a fix the replay prices counts as wrong
  within     every fix or combination measured to save >= 5 % predicted within
             1.25x of its measured saving
  harm       no fix the report recommends (findings and plan) measured slower by > 2 %
  stable     recordings of one model agree on the top finding, estimates within +-20 %
Prints a Markdown table and, with --json, one JSON object.

Usage: python3 tests/gpu/whatif/compare.py --gpuscope build/bin/gpuscope RESULTS_DIR [RESULTS_DIR ...]
(each RESULTS_DIR holds timings.jsonl and/or rec/; later ones add to earlier ones).
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

RULE_FIX = {"amp": "amp", "channels-last": "channels-last", "fused-optimizer": "fused-optimizer",
            "fusion": "compile", "launch-bound": "cuda-graphs", "host-sync": "host-sync",
            "dataloader-stall": "dataloader-stall", "pageable-memcpy": "pageable-memcpy",
            "compile": "compile", "cuda-graphs": "cuda-graphs"}
MIN_MEASURED_PCT = 5.0
RATIO = 1.25
HARM_PCT = 2.0
IDENTITY_PCT = 5.0
STABLE = 0.20


def load_timings(dirs):
    """timings.jsonl per model; the variants timed in a process of their own
    (timings_graphs.jsonl, each with its own plain) are added rescaled to the main
    plain, keeping what was measured as raw_ms and own_plain_ms."""
    out = {}
    for d in dirs:
        for name in ("timings.jsonl", "timings_graphs.jsonl"):
            p = os.path.join(d, name)
            if not os.path.exists(p):
                continue
            for line in open(p):
                line = line.strip()
                if not line:
                    continue
                j = json.loads(line)
                if "variants" not in j or not j.get("plain_ms"):
                    continue
                if name == "timings.jsonl" or j["model"] not in out:
                    if name == "timings.jsonl":
                        out[j["model"]] = j
                        continue
                    out[j["model"]] = dict(j, variants={"plain": j["variants"]["plain"]})
                main = out[j["model"]]
                for v, t in j["variants"].items():
                    if v == "plain" or not t.get("step_ms"):
                        continue
                    scale = main["plain_ms"] / j["plain_ms"]
                    main["variants"][v] = {"step_ms": round(t["step_ms"] * scale, 3),
                                           "raw_ms": t["step_ms"], "own_plain_ms": j["plain_ms"]}
    return out


def recordings(dirs):
    out = {}
    for d in dirs:
        for p in sorted(glob.glob(os.path.join(d, "rec", "*.db.zst")) + glob.glob(os.path.join(d, "rec", "*.db"))):
            name = os.path.basename(p).split(".db")[0]
            model = name.rsplit("_", 1)[0]
            out.setdefault(model, []).append(p)
    return out


def analyze(gpuscope, path, combos, tmp):
    db = path
    if path.endswith(".zst"):
        db = os.path.join(tmp, os.path.basename(path)[:-4])
        if not os.path.exists(db):
            subprocess.check_call(["zstd", "-q", "-d", "-f", path, "-o", db])
    cmd = [gpuscope, "analyze", db, "--format", "json"]
    for c in combos:
        cmd += ["--what-if", c]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": r.stderr.strip()[-300:]}
    return json.loads(r.stdout)


def saving(plain, ms):
    return 100.0 * (1 - ms / plain)


def judge(model, timing, reports):
    plain = timing["plain_ms"]
    measured = {k: v["step_ms"] for k, v in timing["variants"].items() if k != "plain" and v.get("step_ms")}
    singles = {k: v for k, v in measured.items() if "+" not in k}
    best_fix = min(singles, key=singles.get) if singles else None
    rows = []
    for rep in reports:
        if "error" in rep:
            rows.append({"error": rep["error"]})
            continue
        w = rep.get("whatif", {})
        u = rep["summary"].get("untraced", {}).get("step_ms") if isinstance(rep["summary"].get("untraced"), dict) else None
        findings = rep.get("findings", [])
        top = findings[0] if findings else None
        top_fix = (top.get("fix_id") or RULE_FIX.get(top["id"])) if top else None
        predicted = {}
        for f in w.get("fixes", []):
            if f.get("applies"):
                predicted[f["fix"]] = f["step_ms"]
        for q in w.get("asked", []):
            key = "+".join(sorted(q["asked"]))
            if not q["skipped"]:
                predicted[key] = q["step_ms"]
        job = w.get("job_step_ms") or plain
        within, checked, far = 0, 0, []
        for k, ms in measured.items():
            ms_saving = saving(plain, ms)
            if ms_saving < MIN_MEASURED_PCT:
                continue
            checked += 1
            if k not in predicted:
                far.append("%s: measured -%.0f%%, not predicted" % (k, ms_saving))
                continue
            p_saving = saving(job, predicted[k])
            ok = p_saving > 0 and 1 / RATIO <= p_saving / ms_saving <= RATIO
            within += ok
            if not ok:
                far.append("%s: measured -%.0f%%, predicted %+.0f%%" % (k, ms_saving, -p_saving))
        recommended = set()
        for f in findings:
            fx = f.get("fix_id") or RULE_FIX.get(f["id"])
            if fx:
                recommended.add(fx)
        for p in w.get("plan", []):
            recommended.add("+".join(sorted(p["fixes"])))
        harm = [k for k in recommended if k in measured and saving(plain, measured[k]) < -HARM_PCT]
        rows.append({
            "identity_pct": w.get("identity_error_pct"),
            "replay_vs_plain_pct": 100 * (w["replay_ms"] * (job / w["replay_ms"] if False else 1) / plain - 1) if w.get("replay_ms") else None,
            "untraced_ms": u, "job_ms": job,
            "top": top["id"] if top else None, "top_fix": top_fix,
            "top_ok": top_fix == best_fix if best_fix else None,
            "top_pred_pct": top.get("saving_pct") if top else None,
            "within": within, "checked": checked, "far": far, "harm": harm,
            "plan": [("+".join(p["fixes"]), round(p["saving_pct"], 1)) for p in w.get("plan", [])],
        })
    return {"model": model, "plain_ms": plain, "best_fix": best_fix,
            "best_pct": saving(plain, singles[best_fix]) if best_fix else None, "recordings": rows}


def stable(rows):
    good = [r for r in rows if "error" not in r]
    if len(good) < 2:
        return None
    tops = {r["top"] for r in good}
    preds = [r["top_pred_pct"] for r in good if r["top_pred_pct"]]
    spread = (max(preds) / min(preds) - 1) if preds and min(preds) > 0 else 0
    return len(tops) == 1 and spread <= 2 * STABLE


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpuscope", required=True)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    timings, recs = load_timings(a.dirs), recordings(a.dirs)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in sorted(set(timings) & set(recs)):
            combos = [k for k in timings[model]["variants"] if k != "plain"]
            reports = [analyze(a.gpuscope, p, combos, tmp) for p in recs[model]]
            j = judge(model, timings[model], reports)
            j["stable"] = stable(j["recordings"])
            results.append(j)
    if a.json:
        print(json.dumps(results, indent=1))
        return
    print("| model | plain ms | best fix (measured) | top finding | top = best | identity | within 1.25x | harmful | plan |")
    print("|---|---:|---|---|---|---:|---:|---|---|")
    totals = dict(top=0, n=0, within=0, checked=0, harm=0, identity=0)
    for r in results:
        rec = next((x for x in r["recordings"] if "error" not in x), None)
        if rec is None:
            print("| %s | %.2f | | error | | | | | |" % (r["model"], r["plain_ms"]))
            continue
        totals["n"] += 1
        totals["top"] += bool(rec["top_ok"])
        totals["within"] += rec["within"]
        totals["checked"] += rec["checked"]
        totals["harm"] += len(rec["harm"])
        totals["identity"] += rec["identity_pct"] is not None and abs(rec["identity_pct"]) <= IDENTITY_PCT
        print("| %s | %.2f | %s (-%.1f %%) | %s (-%.1f %%) | %s | %s | %d/%d | %s | %s |" % (
            r["model"], r["plain_ms"], r["best_fix"], r["best_pct"] or 0, rec["top"], rec["top_pred_pct"] or 0,
            "yes" if rec["top_ok"] else "no",
            "%+.1f %%" % rec["identity_pct"] if rec["identity_pct"] is not None else "-",
            rec["within"], rec["checked"], ", ".join(rec["harm"]) or "-",
            "; ".join("%s -%.1f %%" % p for p in rec["plan"]) or "-"))
        for f in rec["far"]:
            print("|  |  |  |  |  |  | %s |  |  |" % f)
    print()
    print("top finding = best fix: %d of %d; predicted within 1.25x: %d of %d; harmful recommendations: %d; "
          "identity within 5 %%: %d of %d" % (totals["top"], totals["n"], totals["within"], totals["checked"],
                                              totals["harm"], totals["identity"], totals["n"]))


if __name__ == "__main__":
    main()
