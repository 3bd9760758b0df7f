#!/usr/bin/env python3
"""Does the collector's writer slow the job's own threads from another core?

On the GPU machine a recorded ResNet-50 sometimes runs its launches ~5 us
slower (docs/PERFORMANCE.md, "the slow mode"); one candidate is the writer
thread (decoding CUPTI records and inserting them into SQLite, ~5 000
instructions a row, thousands of rows a step) sharing caches or memory
bandwidth with the training threads. This measures that on any machine with
two or more cores, without a GPU: a probe of the job's kind of CPU work (tiny
torch CPU ops from Python, the path a launch takes through the dispatcher)
timed alone, beside `writer_bench` (the collector's decoder and writer on fake
CUPTI buffers, one thread) and, as a control for a merely busy neighbour core,
beside a spinning process that touches no memory. Rounds alternate the three;
per round the probe's median ns per op, then the median over rounds of each
neighbour's ratio to "alone".

  python3 bench/collector/writer_interference.py --writer-bench build/bin/writer_bench \
      --python /usr/bin/python3 --rounds 7 [--json out.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PROBE = r"""
import statistics, sys, time
import torch
torch.set_num_threads(1)
x = torch.zeros(16)
per = []
for _ in range(int(sys.argv[1])):
    t0 = time.perf_counter_ns()
    for _ in range(2000):
        x.add_(1)
    per.append((time.perf_counter_ns() - t0) / 2000)
print(statistics.median(per))
"""

SPIN = "while True: pass"


def neighbour(kind, writer_bench, python):
    if kind == "alone":
        return None
    if kind == "spin":
        return subprocess.Popen([python, "-c", SPIN], start_new_session=True)
    # The writer in a loop: 2 M kernel rows a run (into a temporary file it removes).
    loop = "while true; do %s 2000000 200 >/dev/null 2>&1 || exit 1; done" % writer_bench
    return subprocess.Popen(["bash", "-c", loop], start_new_session=True)


def stop(proc):
    if proc is None:
        return
    try:
        os.killpg(proc.pid, 9)  # the neighbour and, for the writer's loop, its child
    except ProcessLookupError:
        pass
    proc.wait()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--writer-bench", required=True)
    p.add_argument("--python", default="/usr/bin/python3", help="an interpreter with torch")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--blocks", type=int, default=60, help="blocks of 2 000 ops per probe")
    p.add_argument("--json")
    args = p.parse_args()
    if not os.access(args.writer_bench, os.X_OK):
        sys.exit("writer_interference.py: %s: not an executable" % args.writer_bench)
    if (os.cpu_count() or 1) < 2:
        sys.exit("writer_interference.py: needs two cores (the probe and its neighbour)")
    kinds = ["alone", "writer", "spin"]
    rounds = []
    for r in range(args.rounds):
        row = {}
        for i in range(len(kinds)):
            kind = kinds[(i + r) % len(kinds)]
            proc = neighbour(kind, args.writer_bench, args.python)
            time.sleep(0.5)  # the neighbour under way
            try:
                out = subprocess.run([args.python, "-c", PROBE, str(args.blocks)], capture_output=True, text=True,
                                     check=True).stdout
            finally:
                stop(proc)
            row[kind] = float(out.strip().splitlines()[-1])
        rounds.append(row)
        print("round %d: %s" % (r + 1, ", ".join("%s %.0f ns/op" % (k, row[k]) for k in kinds)), file=sys.stderr)
    result = {"rounds": rounds}
    for k in ("writer", "spin"):
        ratios = [100.0 * (row[k] / row["alone"] - 1) for row in rounds]
        result[k + "_pct"] = {"median": round(statistics.median(ratios), 2), "min": round(min(ratios), 2),
                              "max": round(max(ratios), 2)}
        print("beside %-6s %+.1f %% (%+.1f … %+.1f) against alone, median of %d rounds" % (
            k, statistics.median(ratios), min(ratios), max(ratios), len(ratios)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
