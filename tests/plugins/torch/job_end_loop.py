"""A CPU training loop fed by a DataLoader with 2 worker processes, for
check_job_end.py: it runs until stopped (--seconds, default forever), or
raises after --raise-after seconds (or before its first step, --raise-at-start,
or before any torch op, --raise-at-import).
JOB_END_DEVICE=cuda runs the model on the GPU (tests/gpu/session.sh, step job_end)."""
import argparse
import os
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

ap = argparse.ArgumentParser()
ap.add_argument("--seconds", type=float, default=0, help="stop after this long (0: run until killed)")
ap.add_argument("--raise-after", type=float, default=0, help="raise RuntimeError after this long")
ap.add_argument("--raise-at-start", type=float, default=0,
                help="raise RuntimeError this long after one forward pass, before the first step")
ap.add_argument("--raise-at-import", action="store_true", help="raise RuntimeError before any torch op")
ap.add_argument("--workers", type=int, default=2)
args = ap.parse_args()
if args.raise_at_import:
    raise RuntimeError("job_end_loop.py: failing on purpose before any torch op")

torch.manual_seed(0)
data = TensorDataset(torch.randn(512, 32), torch.randint(0, 4, (512,)))
loader = DataLoader(data, batch_size=8, shuffle=True, num_workers=args.workers, persistent_workers=args.workers > 0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
loss_fn = nn.CrossEntropyLoss()
device = torch.device(os.environ.get("JOB_END_DEVICE", "cpu"))
model.to(device)
start = time.monotonic()
print("started", flush=True)
if args.raise_at_start:
    model(next(iter(loader))[0].to(device))
    time.sleep(args.raise_at_start)
    raise RuntimeError("job_end_loop.py: failing on purpose before the first step")
while True:
    for inputs, targets in loader:
        optimizer.zero_grad()
        inputs, targets = inputs.to(device, non_blocking=True), targets.to(device, non_blocking=True)
        loss_fn(model(inputs), targets).backward()
        optimizer.step()
        elapsed = time.monotonic() - start
        if args.raise_after and elapsed > args.raise_after:
            raise RuntimeError("job_end_loop.py: failing on purpose after %.1f s" % elapsed)
        if args.seconds and elapsed > args.seconds:
            raise SystemExit(0)
