#!/usr/bin/env python3
"""What recording ops in every step costs a training loop of many small ops,
against recording them in 2 steps of every 50 (GPUSCOPE_TORCH_OP_STEPS, the
default of `gpuscope record` for a CUDA torch).

Each run is a fresh process training a deep, narrow MLP with Adam (hundreds of
small ops a step, so torch's callback machinery and the plugin's work are a
visible part of the step). Three setups, alternated round by round so machine
drift hits all alike:

  plain        python alone
  every_step   gpuscope record --full with GPUSCOPE_TORCH_OP_STEPS=0 (ops in every step)
  op_steps     gpuscope record --full with GPUSCOPE_TORCH_OP_STEPS=2/50

Each run reports the median step time over its steps. The report gives, per
setup, the median over rounds, per round the ratio against plain, and what the
recordings hold (ops recorded; on --device cuda also ops placed by position and
the share of kernel time linked to an op).

  python3 bench/torch_plugin/op_steps.py --gpuscope build/bin/gpuscope
  python3 bench/torch_plugin/op_steps.py --gpuscope ... --device cuda --rounds 5 --json
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

from alternate import add_common_arguments, alternated, remove_recording, run_worker, vs_plain

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import op_coverage  # noqa: E402

WORKER = r"""
import json, statistics, sys, time, torch
device, steps, depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(1)
torch.manual_seed(0)
layers = []
for _ in range(depth):
    layers += [torch.nn.Linear(64, 64), torch.nn.LayerNorm(64), torch.nn.GELU()]
model = torch.nn.Sequential(*layers).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(32, 64, device=device)
warmup = 5
times = []
for n in range(steps + warmup):
    t0 = time.perf_counter_ns()
    opt.zero_grad()
    model(x).square().mean().backward()
    opt.step()
    if device == "cuda":
        torch.cuda.synchronize()
    if n >= warmup:
        times.append((time.perf_counter_ns() - t0) / 1e6)
print("RESULT " + json.dumps({"step_ms": statistics.median(times)}))
"""

SETUPS = ["plain", "every_step", "op_steps"]
OP_STEPS = {"every_step": "0", "op_steps": "2/50"}


def run_one(setup, args, tmp, round_no):
    cmd = [args.python, "-c", WORKER, args.device, str(args.steps), str(args.depth)]
    env = dict(os.environ)
    db = None
    if setup != "plain":
        db = os.path.join(tmp, "%s_%d.db" % (setup, round_no))
        cmd = [args.gpuscope, "record", "--full", "-o", db, "--"] + cmd
        env["GPUSCOPE_TORCH_OP_STEPS"] = OP_STEPS[setup]
    result = run_worker(setup, cmd, env)
    if db:
        result.update(op_coverage.coverage(db))
        remove_recording(db)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_arguments(ap, steps=100)
    ap.add_argument("--depth", type=int, default=8, help="Linear+LayerNorm+GELU blocks")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gpuscope_op_steps_")
    runs = alternated(SETUPS, args.rounds, lambda setup, r: run_one(setup, args, tmp, r))
    os.rmdir(tmp)

    keys = ("ops", "ops_placed", "placed_steps", "unplaced_steps", "kernel_time_linked_pct")
    report = {
        "device": args.device, "rounds": args.rounds, "steps": args.steps, "depth": args.depth,
        "median_step_ms": {s: round(statistics.median(x["step_ms"] for x in runs[s]), 3) for s in SETUPS},
        "step_vs_plain": {s: vs_plain(runs, s, "step_ms") for s in SETUPS[1:]},
        "recording": {s: {k: [x.get(k) for x in runs[s]] for k in keys} for s in SETUPS[1:]},
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print("MLP of %d blocks, %d steps, %s, %d rounds (medians)" % (args.depth, args.steps, args.device, args.rounds))
    for s in SETUPS:
        line = "  %-11s step %8.3f ms" % (s, report["median_step_ms"][s])
        if s != "plain":
            r = report["step_vs_plain"][s]
            rec = report["recording"][s]
            line += "  %+.1f %% (%+.1f … %+.1f)  ops %s placed %s" % (
                r["median_pct"], r["min_pct"], r["max_pct"], rec["ops"][0], rec["ops_placed"][0])
        print(line)


if __name__ == "__main__":
    main()
