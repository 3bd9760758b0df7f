"""dataloader-stall: the training loop waits for each batch. The Dataset
decodes every batch on the training process itself (num_workers=0): ~12 ms of
CPU work (a sleep standing in for file reads, plus a numpy augmentation) while
the GPU has nothing to do. --fixed: 4 workers that prefetch, pinned memory,
non_blocking copies, persistent workers.

  python dataloader-stall.py --steps 30 [--fixed]
"""

import time

import numpy as np
import torch
from torch import nn

import advisor_common as common

DECODE_S = 0.010


class Decoded(torch.utils.data.Dataset):
    """Batches "read from disk": a wait per batch, then a numpy flip and scale."""

    def __init__(self, batch, features, classes):
        rng = np.random.default_rng(0)
        self.raw = rng.integers(0, 255, size=(batch, features), dtype=np.uint8)
        self.y = torch.from_numpy(rng.integers(0, classes, size=(batch,)))

    def __len__(self):
        return 1_000_000

    def __getitem__(self, i):
        time.sleep(DECODE_S)
        x = self.raw[:, ::-1] if i % 2 else self.raw
        x = (x.astype(np.float32) - 127.5) / 64.0
        return torch.from_numpy(np.ascontiguousarray(x)), self.y


def main():
    args, device = common.finish(common.parser(__doc__.splitlines()[0], cpu_steps=4, cuda_steps=30).parse_args())
    cuda = device.type == "cuda"
    batch, features, width, layers, classes = (8192, 512, 4096, 6, 1000) if cuda else (64, 64, 128, 2, 10)
    mods = [nn.Linear(features, width), nn.ReLU()]
    for _ in range(layers - 1):
        mods += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*mods, nn.Linear(width, classes)).to(device)
    opt = common.optimizer(model.parameters(), device)
    if args.fixed:
        loader = torch.utils.data.DataLoader(Decoded(batch, features, classes), batch_size=None, num_workers=4,
                                             pin_memory=cuda, prefetch_factor=4, persistent_workers=True)
    else:
        loader = torch.utils.data.DataLoader(Decoded(batch, features, classes), batch_size=None, num_workers=0)
    it = iter(loader)
    loss_fn = nn.CrossEntropyLoss()

    def step(_):
        x, y = next(it)
        x = x.to(device, non_blocking=args.fixed)
        y = y.to(device, non_blocking=args.fixed)
        with common.autocast(device):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    times = common.run(args, device, step)
    common.report("dataloader-stall", args, device, times, batch=batch, decode_ms=DECODE_S * 1000,
                  workers=4 if args.fixed else 0)


if __name__ == "__main__":
    main()
