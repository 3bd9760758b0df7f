#!/usr/bin/env python3
"""Issue 43's GPU check: what Holistic Trace Analysis and TensorBoard's profiler plugin read
from `gpuscope export --steps analysed` agrees with `gpuscope analyze`.

1. Records a small model with `gpuscope record`'s default (control stretch, ops in 2 steps of
   50) unless --recording gives one.
2. `gpuscope analyze --format json` and `gpuscope export --steps analysed --tensorboard DIR
   --chrome FILE`.
3. From the export, as the consumers compute them:
   - HTA idle (get_temporal_breakdown): the GPU events (kernels, copies, sets; events with a
     `stream` argument) from the first start to the last end; idle = that span minus the union
     of the events, in percent. With the `hta` package importable the figure is HTA's own.
   - TensorBoard GPU utilization (overview page): the union of kernel intervals inside the
     ProfilerStep#N ranges' span over that span.
   against analyze's: idle = 100 x (1 - summary.gpu_utilization), utilization =
   summary.gpu_utilization (kernels, copies and sets over the analysed steps' time).
4. Also on the whole recording (`--steps all`), to show the difference the window makes (the
   issue's 98 % idle against 44 %).

Usage: export_consumers.py --gpuscope BIN [--python PY] [--out DIR] [--recording DB]
                           [--tolerance POINTS] [--script PATH [ARGS...]]
Prints one line per figure and a JSON summary ($OUT/export_consumers.json); exit 1 when a
figure of the analysed export is further than --tolerance points (default 1) from analyze's,
2 on bad input or a failed command.
"""
import argparse
import glob
import gzip
import json
import os
import subprocess
import sys


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.stderr.write(r.stdout + r.stderr)
        sys.exit(2)
    return r.stdout


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def union(intervals):
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def clipped(intervals, lo, hi):
    return [(max(s, lo), min(e, hi)) for s, e in intervals if min(e, hi) > max(s, lo)]


def gpu_events(doc, cats):
    return [(e["ts"], e["ts"] + e["dur"]) for e in doc["traceEvents"]
            if e.get("ph") == "X" and e.get("cat") in cats and "stream" in e.get("args", {})]


def hta_idle_pct(doc):
    ev = gpu_events(doc, {"kernel", "gpu_memcpy", "gpu_memset"})
    if not ev:
        return None
    span = max(e for _, e in ev) - min(s for s, _ in ev)
    return 100.0 * (1 - union(ev) / span) if span > 0 else None


def hta_own_idle_pct(trace_dir):
    """HTA's get_temporal_breakdown where the package is installed, else None."""
    try:
        from hta.trace_analysis import TraceAnalysis  # noqa: PLC0415
    except ImportError:
        return None
    try:
        df = TraceAnalysis(trace_dir=trace_dir).get_temporal_breakdown(visualize=False)
        return float(df["idle_time_pctg"].iloc[0])
    except Exception as e:  # HTA's own failures are reported, not fatal
        print(f"HTA itself failed: {e}")
        return None


def tb_utilization(doc):
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in doc["traceEvents"]
             if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")]
    kernels = gpu_events(doc, {"kernel"})
    if not kernels:
        return None
    lo, hi = (min(s for s, _ in steps), max(e for _, e in steps)) if steps else \
        (min(s for s, _ in kernels), max(e for _, e in kernels))
    return union(clipped(kernels, lo, hi)) / (hi - lo) if hi > lo else None


def figures(gpuscope, db, out, steps):
    tb = os.path.join(out, "tb_" + steps)
    chrome = os.path.join(out, f"run_{steps}.json.gz")
    run([gpuscope, "export", db, "--steps", steps, "--tensorboard", tb, "--run", "run", "--chrome", chrome,
         "-f", "-q"])
    files = glob.glob(os.path.join(tb, "run", "*.pt.trace.json.gz"))
    if not files:
        print(f"no TensorBoard file under {tb}")
        sys.exit(2)
    # The process with most GPU work is the one analyze analyses.
    docs = sorted((load(f) for f in files), key=lambda d: -len(gpu_events(d, {"kernel"})))
    return {
        "hta_idle_pct": hta_idle_pct(docs[0]),
        "hta_own_idle_pct": hta_own_idle_pct(os.path.join(tb, "run")),
        "tb_gpu_utilization_pct": None if tb_utilization(docs[0]) is None else 100 * tb_utilization(docs[0]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpuscope", required=True)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--recording")
    ap.add_argument("--tolerance", type=float, default=1.0)
    ap.add_argument("--script", nargs=argparse.REMAINDER,
                    default=["samples/torch/train_mlp.py", "--steps", "120", "--sleep-ms", "0.5"])
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    db = a.recording
    if not db:
        db = os.path.join(a.out, "export_consumers.db")
        run([a.gpuscope, "record", "-f", "-o", db, "--", a.python] + a.script)
    report = json.loads(run([a.gpuscope, "analyze", db, "--format", "json", "--no-what-if"]))
    util = report["summary"].get("gpu_utilization")
    if util is None:
        print("analyze found no GPU activity")
        sys.exit(2)
    want = {"idle_pct": 100 * (1 - util), "utilization_pct": 100 * util}
    result = {"recording": db, "analyze": want, "steps": [report["summary"].get("first_step"),
                                                          report["summary"].get("last_step")]}
    failed = False
    for steps in ("analysed", "all"):
        got = figures(a.gpuscope, db, a.out, steps)
        result[steps] = got
        for name, value, ref in (("HTA idle %", got["hta_idle_pct"], want["idle_pct"]),
                                 ("HTA (its own) idle %", got["hta_own_idle_pct"], want["idle_pct"]),
                                 ("TensorBoard GPU utilization %", got["tb_gpu_utilization_pct"],
                                  want["utilization_pct"])):
            if value is None:
                print(f"--steps {steps:8s} {name:30s} not available")
                continue
            off = value - ref
            ok = abs(off) <= a.tolerance
            if steps == "analysed" and not ok:
                failed = True
            verdict = ("ok" if ok else "FAIL") if steps == "analysed" else "(whole recording, for comparison)"
            print(f"--steps {steps:8s} {name:30s} {value:6.2f}  analyze {ref:6.2f}  ({off:+.2f} points) {verdict}")
    with open(os.path.join(a.out, "export_consumers.json"), "w") as f:
        json.dump(result, f, indent=1)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
