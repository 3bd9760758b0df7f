#!/usr/bin/env python3
"""Communication/computation overlap per rank, as Holistic Trace Analysis counts it, on the
per-rank traces `gpuscope export --tensorboard` writes (one .pt.trace.json[.gz] per process,
each with its distributedInfo rank), and the check that `gpuscope analyze` reports the same.

HTA's get_comm_comp_overlap: of a rank's GPU events (those with a stream), NCCL kernels are
communication, Memcpy/Memset events memory, `...Sync` events other, everything else
computation; each class merged into intervals; overlap = |communication ∩ computation| /
|communication|, in percent. With the `hta` package importable the figure is HTA's own
(TraceAnalysis.get_comm_comp_overlap); otherwise this script's reading of that definition.

Usage: hta_overlap.py TRACE_DIR [--against ANALYZE.json] [--tolerance POINTS] [--json]
  --against: `gpuscope analyze --format json` of the same recording; every rank with NCCL
  kernels must have comm_overlap_pct within --tolerance points (default 5) of HTA's.
Prints one line per rank; exit 1 when a check fails, 2 on bad input.
"""
import argparse
import glob
import gzip
import json
import os
import re
import sys

SYNC = re.compile(r".*Sync")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def kind(name):
    if "nccl" in name.lower():
        return "comm"
    if "Memcpy" in name or "Memset" in name:
        return "memory"
    if SYNC.match(name):
        return "other"
    return "comp"


def merged(intervals):
    out = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


def intersection(a, b):
    total, i, j = 0.0, 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def overlap_of_trace(trace):
    """(rank, comm_us, overlap_pct or None) of one per-rank trace."""
    rank = (trace.get("distributedInfo") or {}).get("rank", 0)
    by_kind = {"comm": [], "comp": []}
    for e in trace.get("traceEvents", []):
        if e.get("ph") != "X" or e.get("cat") == "gpu_user_annotation":
            continue
        args = e.get("args") or {}
        if args.get("stream", -1) in (-1, None):
            continue
        k = kind(e.get("name", ""))
        if k in by_kind:
            by_kind[k].append((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))))
    comm, comp = merged(by_kind["comm"]), merged(by_kind["comp"])
    comm_us = sum(end - start for start, end in comm)
    if comm_us <= 0:
        return rank, 0.0, None
    return rank, comm_us, 100.0 * intersection(comm, comp) / comm_us


def hta_figures(trace_dir):
    """HTA's own per-rank percentages, or None when the package is missing."""
    try:
        from hta.trace_analysis import TraceAnalysis
    except Exception:
        return None
    try:
        frame = TraceAnalysis(trace_dir=trace_dir).get_comm_comp_overlap(visualize=False)
        return {int(r): float(p) for r, p in zip(frame["rank"], frame["comp_comm_overlap_pctg"])}
    except Exception as e:  # HTA could not read our files: say so, use the definition
        print("hta_overlap.py: HTA failed on %s (%s: %s); using its definition instead" % (trace_dir, type(e).__name__, e),
              file=sys.stderr)
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace_dir")
    parser.add_argument("--against")
    parser.add_argument("--tolerance", type=float, default=5.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    files = sorted(glob.glob(os.path.join(args.trace_dir, "**", "*.json*"), recursive=True))
    if not files:
        print("hta_overlap.py: %s: no trace files (.json, .json.gz)" % args.trace_dir, file=sys.stderr)
        return 2
    ours = {}
    for path in files:
        try:
            rank, comm_us, pct = overlap_of_trace(load(path))
        except (OSError, ValueError, KeyError) as e:
            print("hta_overlap.py: %s: not a Chrome trace (%s)" % (path, e), file=sys.stderr)
            return 2
        ours[rank] = (comm_us, pct)
    hta = hta_figures(args.trace_dir)
    source = "hta" if hta is not None else "definition"
    figures = {r: (hta[r] if hta is not None and r in hta else pct) for r, (_, pct) in ours.items()}
    result = {"source": source, "ranks": []}
    for r in sorted(ours):
        comm_us, pct = ours[r]
        result["ranks"].append({"rank": r, "communication_us": round(comm_us, 3),
                                "overlap_pct": None if figures[r] is None else round(figures[r], 2)})
    failed = 0
    if args.against:
        try:
            report = load(args.against)
        except (OSError, ValueError) as e:
            print("hta_overlap.py: %s: not an analyze JSON report (%s)" % (args.against, e), file=sys.stderr)
            return 2
        analysed = {r["rank"]: r.get("comm_overlap_pct") for r in report.get("ranks", [])}
        for row in result["ranks"]:
            theirs, mine = row["overlap_pct"], analysed.get(row["rank"])
            row["analyze_pct"] = mine
            same = (theirs is None and mine is None) or (
                theirs is not None and mine is not None and abs(theirs - mine) <= args.tolerance)
            row["agrees"] = same
            failed += 0 if same else 1
    if args.json:
        print(json.dumps(result))
    else:
        for row in result["ranks"]:
            line = "rank %d: NCCL kernels %.3f ms in all, overlapped by compute %s (%s)" % (
                row["rank"], row["communication_us"] / 1000.0,
                "-" if row["overlap_pct"] is None else "%.2f %%" % row["overlap_pct"], source)
            if "analyze_pct" in row:
                line += "; gpuscope analyze %s: %s" % (
                    "-" if row["analyze_pct"] is None else "%.2f %%" % row["analyze_pct"],
                    "agrees" if row["agrees"] else "DIFFERS by more than %.1f points" % args.tolerance)
            print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
