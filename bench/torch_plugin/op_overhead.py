#!/usr/bin/env python3
"""Per-op cost of the torch plugin.

Runs bursts of tiny CPU ops (torch.add of two 4-element tensors: one ATen op
each, nothing nested) in a fresh process per run, under four setups, and
alternates them round by round so machine drift hits all alike:

  plain       python alone
  collector   gpuscope record --trace nvtx         (collector in, plugin off)
  no_shapes   gpuscope record --trace nvtx,torch   with GPUSCOPE_TORCH_SHAPES=0
  plugin      gpuscope record --trace nvtx,torch   (the default: shapes and dtypes)

Each run times only its bursts (median over bursts). The report gives the median ns per op of
each setup and the median over rounds of the per-round difference against
`collector` (the plugin's own cost) and against `plain`.

  python3 bench/torch_plugin/op_overhead.py --gpuscope build/bin/gpuscope
  python3 bench/torch_plugin/op_overhead.py --gpuscope ... --rounds 9 --python /usr/bin/python3
  python3 bench/torch_plugin/op_overhead.py --gpuscope ... --cpp build/bin/torch_plugin_callback_cost
"""
import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

from alternate import alternated

WORKER = r"""
import statistics, sys, time, torch
burst, bursts = int(sys.argv[1]), int(sys.argv[2])
torch.set_num_threads(1)
x, y = torch.ones(4), torch.ones(4)
for _ in range(2000):  # warm up, and give the collector time to load the plugin
    torch.add(x, y)
time.sleep(0.2)
per_op = []
for _ in range(bursts):
    t0 = time.perf_counter_ns()
    for _ in range(burst):
        torch.add(x, y)
    per_op.append((time.perf_counter_ns() - t0) / burst)
    # Untimed pause: the collector drains each thread's 1 MiB ring every
    # 100 ms; bursts sized to fit it measure recording, not dropping.
    time.sleep(0.12)
print("NS_PER_OP %.1f" % statistics.median(per_op))
"""

SETUPS = ["plain", "collector", "no_shapes", "plugin"]


def run_one(setup, args, tmp, round_no):
    if args.cpp:
        cmd = [args.cpp, "--bursts", str(args.burst), str(args.bursts)]
    else:
        cmd = [args.python, "-c", WORKER, str(args.burst), str(args.bursts)]
    env = dict(os.environ)
    db = None
    if setup != "plain":
        db = os.path.join(tmp, "%s_%d.db" % (setup, round_no))
        trace = "nvtx" if setup == "collector" else "nvtx,torch"
        cmd = [args.gpuscope, "record", "--trace", trace, "-o", db, "--"] + cmd
        if setup == "no_shapes":
            env["GPUSCOPE_TORCH_SHAPES"] = "0"
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if out.returncode != 0:
        sys.exit("%s run failed:\n%s%s" % (setup, out.stdout, out.stderr))
    ns = float(next(l.split()[1] for l in out.stdout.splitlines() if l.startswith("NS_PER_OP")))
    facts = {}
    if db:
        con = sqlite3.connect(db)
        facts["ops_recorded"] = con.execute("SELECT count(*) FROM op").fetchone()[0]
        row = con.execute("SELECT value FROM collector_stat WHERE key = 'dropped_cpu_records'").fetchone()
        facts["dropped"] = row[0] if row else None
        con.close()
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.remove(db + suffix)
    return ns, facts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpuscope", required=True, help="the gpuscope binary (its lib/ holds the plugin)")
    ap.add_argument("--python", default="/usr/bin/python3", help="python with the torch the plugin was built for")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--burst", type=int, default=4000, help="ops per timed burst (must fit the 1 MiB ring)")
    ap.add_argument("--bursts", type=int, default=20, help="timed bursts per run")
    ap.add_argument("--cpp", metavar="BIN", help="time at::add in this torch_plugin_callback_cost binary "
                    "(C++, less noise) instead of torch.add in Python")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gpuscope_op_overhead_")
    results = {s: [] for s in SETUPS}
    facts = {}
    runs = alternated(SETUPS, args.rounds, lambda setup, r: run_one(setup, args, tmp, r))
    for setup, pairs in runs.items():
        for ns, f in pairs:
            results[setup].append(ns)
            if f:
                facts.setdefault(setup, []).append(f)
    os.rmdir(tmp)

    def diff(a, b):
        return statistics.median(x - y for x, y in zip(results[a], results[b]))

    report = {
        "ops_per_burst": args.burst,
        "rounds": args.rounds,
        "median_ns_per_op": {s: round(statistics.median(v), 1) for s, v in results.items()},
        "plugin_cost_ns_per_op": round(diff("plugin", "collector"), 1),
        "plugin_cost_without_shapes_ns_per_op": round(diff("no_shapes", "collector"), 1),
        "shapes_cost_ns_per_op": round(diff("plugin", "no_shapes"), 1),
        "total_cost_vs_plain_ns_per_op": round(diff("plugin", "plain"), 1),
        "dropped_records": {s: [f["dropped"] for f in v] for s, v in facts.items()},
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print("torch plugin per-op cost (%s of 4 floats, %d rounds, medians)"
          % ("at::add in C++" if args.cpp else "torch.add in Python", args.rounds))
    for s in SETUPS:
        print("  %-10s %8.1f ns/op" % (s, report["median_ns_per_op"][s]))
    print("  plugin (shapes on)  - collector: %+.1f ns/op" % report["plugin_cost_ns_per_op"])
    print("  plugin (shapes off) - collector: %+.1f ns/op" % report["plugin_cost_without_shapes_ns_per_op"])
    print("  shapes and dtypes alone:         %+.1f ns/op" % report["shapes_cost_ns_per_op"])
    print("  plugin - plain python:           %+.1f ns/op" % report["total_cost_vs_plain_ns_per_op"])
    print("  dropped records: %s" % report["dropped_records"])


if __name__ == "__main__":
    main()
