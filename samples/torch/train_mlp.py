"""A small MLP training loop fed by a DataLoader.

With the defaults it is a healthy run. With --sleep-ms the Dataset sleeps per
item, so the loop waits on data (input-bound); --workers N moves that work into
N DataLoader worker processes, which is the usual fix.

  python train_mlp.py --steps 50
  python train_mlp.py --sleep-ms 2 --workers 0     # input-bound
  python train_mlp.py --sleep-ms 2 --workers 4     # the fix
  python train_mlp.py --profile mlp_trace.json      # torch.profiler chrome trace
"""

import statistics
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

import sample_common

FEATURES = 256
CLASSES = 10


class SleepyDataset(Dataset):
    """Random but fixed samples; sleeping per item stands in for decoding or
    augmentation work done in Python."""

    def __init__(self, length, sleep_ms):
        generator = torch.Generator().manual_seed(0)
        self.inputs = torch.randn(length, FEATURES, generator=generator)
        self.targets = torch.randint(0, CLASSES, (length,), generator=generator)
        self.sleep_s = sleep_ms / 1000.0

    def __len__(self):
        return len(self.inputs)

    def __getitem__(self, index):
        if self.sleep_s > 0:
            time.sleep(self.sleep_s)
        return self.inputs[index], self.targets[index]


def main():
    parser = sample_common.base_parser(__doc__.splitlines()[0], cpu_steps=20, cuda_steps=100)
    parser.add_argument("--batch", type=int, default=None, help="default 64 on cpu, 256 on cuda")
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--sleep-ms", type=float, default=0.0, help="sleep per dataset item")
    parser.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    args = sample_common.finish_args(parser.parse_args())
    device = torch.device(args.device)
    batch = args.batch or (256 if device.type == "cuda" else 64)
    torch.manual_seed(0)

    total_steps = args.warmup + args.steps
    loader = DataLoader(
        SleepyDataset(total_steps * batch, args.sleep_ms),
        batch_size=batch,
        shuffle=True,
        drop_last=True,
        num_workers=args.workers,
        pin_memory=device.type == "cuda",
    )
    model = nn.Sequential(
        nn.Linear(FEATURES, args.hidden), nn.ReLU(),
        nn.Linear(args.hidden, args.hidden), nn.ReLU(),
        nn.Linear(args.hidden, args.hidden), nn.ReLU(),
        nn.Linear(args.hidden, CLASSES),
    ).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    batches = iter(loader)
    data_wait_ms = []
    losses = []

    def step(i):
        # Time spent waiting for the next batch is what --sleep-ms inflates.
        t0 = time.perf_counter()
        inputs, targets = next(batches)
        if i >= args.warmup:
            data_wait_ms.append((time.perf_counter() - t0) * 1000.0)
        inputs = inputs.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())

    times_ms = sample_common.run_steps(args, device, step)
    sample_common.report(
        "train_mlp", args, device, times_ms,
        batch=batch,
        workers=args.workers,
        sleep_ms_per_item=args.sleep_ms,
        median_data_wait_ms=round(statistics.median(data_wait_ms), 3) if data_wait_ms else None,
        final_loss=round(float(losses[-1]), 4) if losses else None,
    )


if __name__ == "__main__":
    main()
