"""A CPU training loop for the on-demand checks (check_on_demand.py): a small
MLP trained with SGD, one optimizer step per step, each step padded by a sleep
so the job runs at a steady pace until --stop-file appears (or --seconds pass).
Under torchrun (WORLD_SIZE set) it trains with DistributedDataParallel over gloo.
While --slow-file exists the next step sleeps --slow-ms more, and the file is
removed: a planted slow step, exactly when the check wants one. While
--pause-file exists no step ends."""
import argparse
import os
import time

import torch
from torch import nn

ap = argparse.ArgumentParser()
ap.add_argument("--step-ms", type=float, default=20)
ap.add_argument("--seconds", type=float, default=90)
ap.add_argument("--stop-file", default="")
ap.add_argument("--slow-file", default="")
ap.add_argument("--slow-ms", type=float, default=400)
ap.add_argument("--pause-file", default="", help="while it exists, no step ends")
args = ap.parse_args()

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
if "WORLD_SIZE" in os.environ:
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    dist.init_process_group("gloo")
    model = DistributedDataParallel(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
start = time.time()
steps = 0
while True:
    while args.pause_file and os.path.exists(args.pause_file):
        time.sleep(0.01)
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
    steps += 1
    pause = args.step_ms
    if args.slow_file and os.path.exists(args.slow_file):
        os.remove(args.slow_file)
        pause += args.slow_ms
    time.sleep(pause / 1000.0)
    stop = bool(args.stop_file and os.path.exists(args.stop_file)) or time.time() - start >= args.seconds
    if "WORLD_SIZE" in os.environ:  # every rank stops after the same step
        flag = torch.tensor([1 if stop else 0])
        torch.distributed.all_reduce(flag, op=torch.distributed.ReduceOp.MAX)
        stop = bool(flag.item())
    if stop:
        break
if "WORLD_SIZE" in os.environ:
    torch.distributed.barrier()
print("on_demand_loop: %d steps" % steps, flush=True)
