#!/usr/bin/env python3
"""Tracing cost on real models, from the overhead.jsonl that
`tests/gpu/models/advisor_models.sh` (stage `overhead`, run by
bench/models/tracing_cost.sh) writes: one line per run, the modes of a round
alternated (plain, gpuscope default, torch.profiler, ...).

Per loop and mode it prints the median over rounds of the round's ratio
(median step of the mode's run / median step of the plain run of the same
round), with the lowest and highest round, and, for gpuscope's default
recording (and each ablation of it: no_memory, no_shapes, default_noops, no_api,
...), its own measure inside the process: traced against untraced steps
(`summary.untraced.tracing_cost_pct` of `gpuscope analyze`, "inside"), which is
free of the ±20-40 % that whole processes differ by on the GPU machine, and where
the run recorded ops in some steps only, its steps that traced kernels without
recording ops against the untraced ones (bench/models/steps_by_kind.py,
"kernels-only steps"): the steady state of a long job. Runs made with
OVERHEAD_ARGS=--threads also give the CPU time of one tiny launch after each
block (real_models.py's launch_us); per mode, the median over rounds of what a
launch cost more than in the plain run of the round ("launch +N µs"). Runs recorded with
`--trace ...,overhead` (mode overhead_records) also give what CUPTI's overhead records took per
analysed step ("CUPTI overhead N ms a step", with the largest kind).

With launch probes, a second table sets each traced block against its probe: blocks whose launch
cost at most FAST_US (1.5) µs more than the plain run's of the round ("fast") against the others
("slow"), the median block of each over the plain step of its round, and the correlation of
block time and probe over the mode's blocks: is a slow recorded block one whose launches cost more?

  bench/models/tracing_cost_table.py OUT/models/overhead.jsonl [MORE.jsonl ...] [--json summary.json]

Several files (one per machine start) are pooled; a round pairs runs of one file only.
"""
import argparse
import json
import statistics
import sys


def load(path):
    runs = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit("tracing_cost_table.py: %s:%d: not JSON: %s" % (path, n, e))
            if r.get("run") and "step_ms" in r["run"]:
                runs.append(r)
    return runs


def launch_us(run):
    """Median over the run's blocks of real_models.py's launch probe, or None."""
    probes = [b["launch_us"] for b in run.get("threads") or [] if b.get("launch_us") is not None]
    return statistics.median(probes) if probes else None


FAST_US = 1.5


def pearson(xs, ys):
    if len(xs) < 3:
        return None
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx, syy = sum((x - mx) ** 2 for x in xs), sum((y - my) ** 2 for y in ys)
    return sxy / (sxx * syy) ** 0.5 if sxx and syy else None


def probe_table(by, modes):
    """Per model and traced mode: blocks after a plain-speed launch probe against the others."""
    rows = {}
    for model, rounds in by.items():
        for m in modes:
            fast, slow, xs, ys = [], [], [], []
            for rd in rounds.values():
                if m not in rd or "plain" not in rd:
                    continue
                base_us, base_ms = launch_us(rd["plain"]["run"]), rd["plain"]["run"]["step_ms"]
                blocks = rd[m]["run"].get("threads") or []
                if base_us is None or len(blocks) != len(rd[m]["run"].get("blocks_ms") or []):
                    continue
                for b, ms in zip(blocks, rd[m]["run"]["blocks_ms"]):
                    if b.get("launch_us") is None:
                        continue
                    pct = 100.0 * (ms / base_ms - 1)
                    (fast if b["launch_us"] - base_us <= FAST_US else slow).append(pct)
                    xs.append(b["launch_us"])
                    ys.append(ms)
            if xs:
                rows[(model, m)] = (fast, slow, pearson(xs, ys))
    if not rows:
        return {}
    print()
    print("| loop | mode | blocks after a plain-speed launch (≤ +%.1f µs): median against plain | other blocks | r (block time, launch) |" % FAST_US)
    print("|---|---|---:|---:|---:|")
    out = {}
    for (model, m), (fast, slow, r) in rows.items():
        cell = lambda v: "%+.1f %% (n=%d)" % (statistics.median(v), len(v)) if v else "-"
        print("| %s | %s | %s | %s | %s |" % (model, m, cell(fast), cell(slow), "%.2f" % r if r is not None else "-"))
        out.setdefault(model, {})[m] = {"fast_blocks_pct": fast, "slow_blocks_pct": slow, "r": r}
    return out


def spread(values):
    return "%+.1f %% (%+.1f … %+.1f, n=%d)" % (statistics.median(values), min(values), max(values), len(values))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("overhead_jsonl", nargs="+")
    p.add_argument("--json", help="also write the numbers as JSON here")
    args = p.parse_args()
    runs = []
    by = {}  # model -> (file, round) -> mode -> step_ms, untraced
    for i, path in enumerate(args.overhead_jsonl):
        loaded = load(path)
        if not loaded:
            sys.exit("tracing_cost_table.py: %s: no runs with a step time" % path)
        for r in loaded:
            by.setdefault(r["run"]["model"], {}).setdefault((i, r["round"]), {})[r["overhead"]] = r
        runs += loaded
    modes = []
    for r in runs:
        if r["overhead"] not in modes and r["overhead"] != "plain":
            modes.append(r["overhead"])
    summary = {}
    print("| loop | plain step (median of rounds) | " + " | ".join(
        "%s: per-round ratio to plain; inside the process" % m for m in modes) + " |")
    print("|---|---:|" + "---:|" * len(modes))
    for model, rounds in by.items():
        plain = [rd["plain"]["run"]["step_ms"] for rd in rounds.values() if "plain" in rd]
        row = {"plain_ms": statistics.median(plain) if plain else None, "rounds": len(rounds)}
        cells = []
        for m in modes:
            ratios = [100.0 * (rd[m]["run"]["step_ms"] / rd["plain"]["run"]["step_ms"] - 1)
                      for rd in rounds.values() if m in rd and "plain" in rd]
            inside = [rd[m]["untraced"]["tracing_cost_pct"] for rd in rounds.values()
                      if m in rd and rd[m].get("untraced") and rd[m]["untraced"].get("tracing_cost_pct") is not None]
            # bench/models/steps_by_kind.py: the steps that trace kernels without recording ops.
            steady = [rd[m]["untraced"]["kernels_pct"] for rd in rounds.values()
                      if m in rd and rd[m].get("untraced") and rd[m]["untraced"].get("kernels_pct") is not None]
            # What one tiny launch cost this mode more than the plain run of its round.
            launch = [launch_us(rd[m]["run"]) - launch_us(rd["plain"]["run"]) for rd in rounds.values()
                      if m in rd and "plain" in rd and launch_us(rd[m]["run"]) is not None
                      and launch_us(rd["plain"]["run"]) is not None]
            # CUPTI's own overhead records (analyze's summary.tracer_overhead), ms per analysed step.
            overhead = [rd[m]["untraced"]["tracer_overhead"] for rd in rounds.values()
                        if m in rd and (rd[m].get("untraced") or {}).get("tracer_overhead")]
            row[m] = {"ratio_pct": ratios, "inside_pct": inside, "kernels_only_pct": steady, "launch_extra_us": launch,
                      "tracer_overhead_ms": [o["ms_per_step"] for o in overhead]}
            cell = spread(ratios) if ratios else "-"
            if inside:
                cell += "; inside " + spread(inside)
            if steady:
                cell += "; kernels-only steps " + spread(steady)
            if launch:
                cell += "; launch %+.2f µs (%+.2f … %+.2f)" % (statistics.median(launch), min(launch), max(launch))
            if overhead:
                per_step = [o["ms_per_step"] for o in overhead]
                top = max(overhead, key=lambda o: o["ms_per_step"])["kinds"][:1]
                cell += "; CUPTI overhead %.3f ms a step (%.3f … %.3f)%s" % (
                    statistics.median(per_step), min(per_step), max(per_step),
                    ", most %s" % top[0]["name"] if top else "")
            cells.append(cell)
        print("| %s | %s | %s |" % (model, "%.2f ms" % row["plain_ms"] if plain else "-", " | ".join(cells)))
        summary[model] = row
    probes = probe_table(by, modes)
    for model, per_mode in probes.items():
        for m, v in per_mode.items():
            summary[model][m]["probe_split"] = v
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
