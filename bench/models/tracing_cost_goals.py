#!/usr/bin/env python3
"""Issue 18's loops in one table: what `gpuscope record` (default) and torch.profiler cost each
loop against the plain job, from the committed H200 results in bench/results/, set against the
issue's goal for the loop.

Per loop, LOOPS below names the result files that measured the current default (ops in 2 steps of
every 50 where ops matter; see each entry's note) and the modes to read. A round pairs the runs of
one file and round number (tests/gpu/models/advisor_models.sh's `overhead` stage alternates them);
a mode's figure is the median over rounds of (its step / the plain step of the round) - 1, with the
lowest and highest round. "Below torch.profiler" counts the rounds where gpuscope's ratio was the
lower of the two.

  python3 bench/models/tracing_cost_goals.py [--results bench/results] [--json out.json]
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tracing_cost_table import load  # noqa: E402

# loop: the model key in the results, the goal for gpuscope's mode (per cent over plain), the
# mode the goal is about, and the files (newest first).
LOOPS = [
    dict(loop="ResNet-50 (timm, fp32, batch 64)", model="resnet50", goal=10.0, mode="default",
         files=["2026-12-05-tracing-cost-resnet50-call1.jsonl", "2026-12-04-tracing-cost-floor-call1.jsonl",
                "2026-12-04-tracing-cost-op-steps-call3.jsonl", "2026-12-04-tracing-cost-op-steps-call1.jsonl"],
         note="ops in 2 steps of 50 (every default run here says op_steps 2/50)"),
    dict(loop="`.item()` sync loop (17 a step)", model="sync_loop", goal=10.0, mode="default",
         files=["2026-12-05-tracing-cost-tiny-sync-call2.jsonl", "2026-12-04-tracing-cost-op-steps-call3-sync-tiny.jsonl"],
         note="ops in 2 steps of 50"),
    dict(loop="tiny MLP, launch-bound, every step traced", model="tiny_mlp", goal=30.0, mode="default",
         files=["2026-12-05-tracing-cost-tiny-sync-call2.jsonl", "2026-12-04-tracing-cost-op-steps-call3-sync-tiny.jsonl"],
         note="ops in 2 steps of 50"),
    dict(loop="tiny MLP, launch-bound, `--sample 0.2,0.8`", model="tiny_mlp", goal=5.0, mode="sampled",
         files=["2026-12-05-tracing-cost-tiny-sync-call2.jsonl"], note=""),
    dict(loop="64 MB pageable copy a step", model="pageable_copy", goal=3.0, mode="default",
         files=["2026-12-04-tracing-cost-call4.jsonl", "2026-12-03-tracing-cost.jsonl"],
         note="ops in every step then (one copy and a few ops a step: op sampling changes nothing here)"),
    dict(loop="Lightning `Trainer`, CPU-heavy Dataset in the main process", model="lightning_cpu", goal=5.0,
         mode="default", files=["2026-12-04-lightning-fetch-ops.jsonl", "2026-12-04-lightning-fetch-ops-call6.jsonl"],
         note="after the DataLoader fetch's ops were left out (commit d18c71e)"),
]


def spread(values):
    if not values:
        return "-"
    return "%+.1f %% (%+.1f … %+.1f), %d" % (statistics.median(values), min(values), max(values), len(values))


def rounds_of(results, entry):
    """[(plain ms, {mode: ms})] per round of the entry's model in its files."""
    out = []
    for name in entry["files"]:
        path = os.path.join(results, name)
        if not os.path.exists(path):
            sys.exit("tracing_cost_goals.py: %s: no such file" % path)
        by_round = {}
        for r in load(path):
            if r["run"].get("model") == entry["model"]:
                by_round.setdefault(r["round"], {})[r["overhead"]] = r["run"]["step_ms"]
        for modes in by_round.values():
            if "plain" in modes:
                out.append(modes)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p.add_argument("--results", default=os.path.join(root, "bench", "results"))
    p.add_argument("--json", help="also write the numbers as JSON here")
    args = p.parse_args()
    rows = []
    print("| loop | goal | plain step | gpuscope: median (range), rounds | torch.profiler: median (range), rounds "
          "| gpuscope below torch.profiler | goal met | measured |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    for e in LOOPS:
        rounds = rounds_of(args.results, e)
        pct = lambda rd, m: 100.0 * (rd[m] / rd["plain"] - 1)
        ours = [pct(rd, e["mode"]) for rd in rounds if e["mode"] in rd]
        theirs = [pct(rd, "torch_profiler") for rd in rounds if "torch_profiler" in rd]
        both = [(pct(rd, e["mode"]), pct(rd, "torch_profiler")) for rd in rounds if e["mode"] in rd and "torch_profiler" in rd]
        below = sum(1 for a, b in both if a < b)
        plain = statistics.median(rd["plain"] for rd in rounds) if rounds else None
        median = statistics.median(ours) if ours else None
        met = "-" if median is None else ("yes" if median <= e["goal"] else "no")
        dates = sorted({f[:10] for f in e["files"]})
        row = dict(loop=e["loop"], model=e["model"], mode=e["mode"], goal_pct=e["goal"], plain_ms=plain,
                   gpuscope_pct=ours, torch_profiler_pct=theirs, below_torch_profiler=[below, len(both)],
                   goal_met=met, files=e["files"], note=e["note"])
        rows.append(row)
        print("| %s | ≤ +%g %% | %s | %s | %s | %s | %s | %s |" % (
            e["loop"], e["goal"], "%.2f ms" % plain if plain else "-", spread(ours), spread(theirs),
            "%d of %d rounds" % (below, len(both)) if both else "-", met, ", ".join(dates)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
