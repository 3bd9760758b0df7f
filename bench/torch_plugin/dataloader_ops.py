#!/usr/bin/env python3
"""What recording costs a training loop fed by a main-process DataLoader whose Dataset runs torch ops per sample.

Each run is a fresh process training a small MLP from a DataLoader with
num_workers=0; its Dataset does --item-ops torch CPU ops per sample (a
stand-in for per-sample augmentation in torch). Three setups, alternated round
by round so machine drift hits all alike:

  plain        python alone
  default      gpuscope record --full (ops recorded, but not inside the fetch)
  fetch_ops    the same with GPUSCOPE_TORCH_DATALOADER_OPS=1 (the fetch's ops too)

Each run reports the median over its steps of the time spent in next(loader)
and of the whole step. The report gives, per setup, the median over rounds,
and per round the ratio against plain.

  python3 bench/torch_plugin/dataloader_ops.py --gpuscope build/bin/gpuscope
  python3 bench/torch_plugin/dataloader_ops.py --gpuscope ... --device cuda --rounds 5 --json
"""
import argparse
import json
import os
import sqlite3
import statistics
import tempfile

from alternate import add_common_arguments, alternated, remove_recording, run_worker, vs_plain

WORKER = r"""
import json, statistics, sys, time, torch
from torch.utils.data import DataLoader, Dataset
device, steps, batch, item_ops = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(1)
torch.manual_seed(0)

class PerSampleOps(Dataset):
    def __init__(self, n):
        self.data = torch.randn(n, 64)
        self.targets = torch.randint(0, 10, (n,))
    def __len__(self):
        return len(self.data)
    def __getitem__(self, i):
        x = self.data[i]
        for _ in range(item_ops):
            x = x * 1.001 + 0.001
        return x, self.targets[i]

warmup = 5
loader = DataLoader(PerSampleOps((steps + warmup) * batch), batch_size=batch, shuffle=True, num_workers=0)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
fetch, step = [], []
it = iter(loader)
for n in range(steps + warmup):
    t0 = time.perf_counter_ns()
    x, y = next(it)
    t1 = time.perf_counter_ns()
    x, y = x.to(device), y.to(device)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if device == "cuda":
        torch.cuda.synchronize()
    t2 = time.perf_counter_ns()
    if n >= warmup:
        fetch.append((t1 - t0) / 1e6)
        step.append((t2 - t0) / 1e6)
print("RESULT " + json.dumps({"fetch_ms": statistics.median(fetch), "step_ms": statistics.median(step)}))
"""

SETUPS = ["plain", "default", "fetch_ops"]


def run_one(setup, args, tmp, round_no):
    cmd = [args.python, "-c", WORKER, args.device, str(args.steps), str(args.batch), str(args.item_ops)]
    env = dict(os.environ)
    db = None
    if setup != "plain":
        db = os.path.join(tmp, "%s_%d.db" % (setup, round_no))
        cmd = [args.gpuscope, "record", "--full", "-o", db, "--"] + cmd
        if setup == "fetch_ops":
            env["GPUSCOPE_TORCH_DATALOADER_OPS"] = "1"
    result = run_worker(setup, cmd, env)
    if db:
        con = sqlite3.connect(db)
        result["ops_recorded"] = con.execute("SELECT count(*) FROM op").fetchone()[0]
        con.close()
        remove_recording(db)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_arguments(ap, steps=30)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--item-ops", type=int, default=8, help="torch ops pairs (mul, add) per sample")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gpuscope_dataloader_ops_")
    runs = alternated(SETUPS, args.rounds, lambda setup, r: run_one(setup, args, tmp, r))
    os.rmdir(tmp)

    def med(setup, key):
        return round(statistics.median(x[key] for x in runs[setup]), 3)

    report = {
        "device": args.device, "rounds": args.rounds, "steps": args.steps, "batch": args.batch,
        "item_ops": args.item_ops,
        "median_ms": {s: {"fetch": med(s, "fetch_ms"), "step": med(s, "step_ms")} for s in SETUPS},
        "step_vs_plain": {s: vs_plain(runs, s, "step_ms") for s in SETUPS[1:]},
        "fetch_vs_plain": {s: vs_plain(runs, s, "fetch_ms") for s in SETUPS[1:]},
        "ops_recorded": {s: [x["ops_recorded"] for x in runs[s]] for s in SETUPS[1:]},
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print("main-process DataLoader, %d ops per sample, batch %d, %s, %d rounds (medians)"
          % (2 * args.item_ops, args.batch, args.device, args.rounds))
    for s in SETUPS:
        m = report["median_ms"][s]
        line = "  %-10s fetch %8.2f ms  step %8.2f ms" % (s, m["fetch"], m["step"])
        if s != "plain":
            r = report["step_vs_plain"][s]
            line += "  step %+.1f %% (%+.1f … %+.1f)" % (r["median_pct"], r["min_pct"], r["max_pct"])
        print(line)


if __name__ == "__main__":
    main()
