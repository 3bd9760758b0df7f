"""Estimates against measured savings: reads what advisor_models.sh left in a
folder (timings.jsonl from real_models.py, <model>.json from `gpuscope analyze
--format json`) and prints a Markdown table per model plus the checks:

  - the top finding is the fix that saved most (measured without gpuscope);
  - every fix that saved >= 5 % appears as a finding;
  - every finding of >= MIN_JUDGED % (estimate or measured) is within 1.5x of
    the measured saving of its fix (findings whose advice is the same fix, such
    as dataloader-stall and low-utilization both naming DataLoader workers,
    are judged together: the sum of their estimates against that fix);
  - the healthy model has no finding above 5 %;
  - ResNet-50: no low-utilization above 5 %, channels-last first.

A finding's fix is the set of variants below; its measured saving is the best
of them. Exit status 1 when a check fails.

  python3 tests/gpu/models/compare.py OUT/models [--json summary.json]
"""

import argparse
import json
import os
import statistics
import sys

# The fixes (real_models.py variants) each finding's advice names.
FIXES = {
    "channels-last": ["channels_last"],
    "amp": ["bf16", "tf32"],
    "launch-bound": ["cuda_graphs", "compile"],
    "fused-optimizer": ["fused_adamw"],
    "host-sync": ["no_sync"],
    "dataloader-stall": ["workers"],
    "low-utilization": ["workers"],
    "pageable-memcpy": ["workers", "pinned"],
    "fusion": ["compile"],
}
# Fixes a finding's advice also names, beside the ones its saving is judged on.
ALSO_NAMES = {"launch-bound": ["fused_adamw"], "amp": ["tf32"]}
FIX_TEXT = {"tf32_off": None}  # variants that are not fixes (controls)
# Variants that apply another fix as well, as the finding's advice says to: the
# item loop's CUDA graph needs a capturable optimizer, and launch-bound's fix
# names the fused one. Its measured saving is judged against the findings of
# both fixes together, and a top finding whose fix it includes counts as naming it.
INCLUDES = {"item_loop": {"cuda_graphs": ["fused_adamw"]}}
RATIO = 1.5
MIN_JUDGED = 3.0  # % of the step: below this, run-to-run noise decides the ratio


def load_timings(folder):
    runs = {}
    with open(os.path.join(folder, "timings.jsonl")) as f:
        for line in f:
            r = json.loads(line[len("REAL_MODEL "):] if line.startswith("REAL_MODEL ") else line)
            if "step_ms" in r and not r.get("torch_profiler"):
                runs.setdefault(r["model"], {}).setdefault(r["variant"], []).append(r["step_ms"])
    return {m: {v: statistics.mean(t) for v, t in vs.items()} for m, vs in runs.items()}


def savings(times):
    plain = times["plain"]
    return {v: 100.0 * (plain - t) / plain for v, t in times.items() if v != "plain" and v not in FIX_TEXT}


def judge(model, times, report):
    saved = savings(times)
    includes = INCLUDES.get(model, {})
    findings = report.get("findings", []) if report else []
    s = report.get("summary", {}) if report else {}
    lines, fails = [], []
    lines.append("### %s" % model)
    lines.append("")
    u = s.get("untraced", {})
    lines.append("plain %.2f ms without gpuscope; the report: untraced step %s ms (%s), traced %s ms" % (
        times["plain"], u.get("step_ms") or "?", u.get("method") or u.get("unknown_why") or "?",
        u.get("traced_step_ms") or "?"))
    lines.append("")
    lines.append("| fix | step ms | measured saving | finding | estimated | est/measured |")
    lines.append("|---|---:|---:|---|---:|---:|")
    claimed = set()
    groups = {}  # best fix -> summed estimate
    best_of = []
    for f in findings:
        fixes = FIXES.get(f["id"], [])
        best = max((v for v in fixes if v in saved), key=lambda v: saved[v], default=None)
        best_of.append(best)
        claimed.update(v for v in fixes + ALSO_NAMES.get(f["id"], []) if v in saved)
        if best:
            groups[best] = groups.get(best, 0.0) + f["saving_pct"]
    # A variant that includes another fix also answers for that fix's findings.
    for outer, inner in includes.items():
        if outer in groups:
            groups[outer] += sum(f["saving_pct"] for f, b in zip(findings, best_of) if b in inner)
    for i, f in enumerate(findings):
        best = best_of[i]
        measured = saved[best] if best else None
        est = groups[best] if best else f["saving_pct"]
        ratio = est / measured if measured and measured > 0 else None
        lines.append("| %s | %s | %s | %d. `%s` | %.1f %%%s | %s |" % (
            best or "-", "%.2f" % times[best] if best else "-",
            "%.1f %%" % measured if measured is not None else "not measured", i + 1, f["id"], f["saving_pct"],
            " (with the others naming %s: %.1f %%)" % (best, est) if best and est != f["saving_pct"] else "",
            "%.2f" % ratio if ratio else "-"))
        if max(est, measured or 0) >= MIN_JUDGED and (best is None or best_of.index(best) == i):
            if measured is None:
                fails.append("%s: finding %s has no measured fix" % (model, f["id"]))
            elif ratio is None or not (1 / RATIO <= ratio <= RATIO):
                fails.append("%s: %s estimated %.1f %% against %.1f %% measured (%s)" % (model, f["id"], est, measured, best))
    for v, pct in sorted(saved.items(), key=lambda kv: -kv[1]):
        if v not in claimed:
            lines.append("| %s | %.2f | %.1f %% | (none) | | |" % (v, times[v], pct))
            if pct >= 5:
                fails.append("%s: fix %s saved %.1f %% and no finding names it" % (model, v, pct))
    best_fix = max(saved, key=saved.get) if saved else None
    if findings and best_fix and saved[best_fix] >= 5:
        top_fixes = FIXES.get(findings[0]["id"], [])
        top_fixes = top_fixes + [outer for outer, inner in includes.items() if set(inner) & set(top_fixes)]
        top_saved = max((saved[v] for v in top_fixes if v in saved), default=None)
        if best_fix not in top_fixes and (top_saved is None or top_saved < saved[best_fix] - 2):
            fails.append("%s: top finding %s, but %s saved most (%.1f %%)" % (
                model, findings[0]["id"], best_fix, saved[best_fix]))
    elif not findings and best_fix and saved[best_fix] >= 5:
        fails.append("%s: no finding, %s saved %.1f %%" % (model, best_fix, saved[best_fix]))
    if model == "healthy":
        fails += ["healthy: %s at %.1f %%" % (f["id"], f["saving_pct"]) for f in findings if f["saving_pct"] > 5]
    if model == "resnet50":
        fails += ["resnet50: low-utilization at %.1f %%" % f["saving_pct"] for f in findings
                  if f["id"] == "low-utilization" and f["saving_pct"] > 5]
        if not findings or findings[0]["id"] != "channels-last":
            fails.append("resnet50: top finding %s, not channels-last" % (findings[0]["id"] if findings else None))
    lines.append("")
    return lines, fails


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder")
    p.add_argument("--suffix", default="", help="report file suffix, e.g. _full for <model>_full.json")
    args = p.parse_args()
    timings = load_timings(args.folder)
    all_fails = []
    for model, times in timings.items():
        if "plain" not in times:
            continue
        path = os.path.join(args.folder, model + args.suffix + ".json")
        report = json.load(open(path)) if os.path.exists(path) else None
        lines, fails = judge(model, times, report)
        if report is None:
            fails.append("%s: no report %s" % (model, path))
        print("\n".join(lines))
        all_fails += fails
    print("### checks\n")
    print("\n".join("- FAIL " + f for f in all_fails) if all_fails else "- all passed")
    return 1 if all_fails else 0


if __name__ == "__main__":
    sys.exit(main())
