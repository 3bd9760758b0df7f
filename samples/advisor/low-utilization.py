"""low-utilization: per-batch preprocessing in numpy on the training thread
(convert, normalize, flip, pool) takes longer than the GPU's share of the
step, so the GPU idles while the CPU works. --fixed ships the raw uint8 batch
to the GPU and does the same preprocessing there as tensor ops.

  python low-utilization.py --steps 30 [--fixed]
"""

import numpy as np
import torch
from torch import nn

import advisor_common as common


def main():
    args, device = common.finish(common.parser(__doc__.splitlines()[0], cpu_steps=3, cuda_steps=30).parse_args())
    cuda = device.type == "cuda"
    batch, size, width, layers = (512, 32, 8192, 4) if cuda else (64, 16, 64, 2)
    features = 3 * (size // 2) * (size // 2)
    rng = np.random.default_rng(0)
    raw = [rng.integers(0, 255, size=(batch, 3, size, size), dtype=np.uint8) for _ in range(2)]
    mean = np.array([125.3, 123.0, 113.9], dtype=np.float32).reshape(1, 3, 1, 1)
    std = np.array([63.0, 62.1, 66.7], dtype=np.float32).reshape(1, 3, 1, 1)
    mean_t = torch.from_numpy(mean).to(device)
    std_t = torch.from_numpy(std).to(device)
    raw_t = [torch.from_numpy(r) for r in raw]
    if cuda and args.fixed:
        raw_t = [r.pin_memory() for r in raw_t]
    mods = [nn.Linear(features, width), nn.ReLU()]
    for _ in range(layers - 1):
        mods += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*mods, nn.Linear(width, 10)).to(device)
    opt = common.optimizer(model.parameters(), device)
    y = torch.randint(0, 10, (batch,), device=device)
    loss_fn = nn.CrossEntropyLoss()

    def preprocess_numpy(r, flip):
        x = (r.astype(np.float32) - mean) / std
        if flip:
            x = x[..., ::-1]
        x = x.reshape(batch, 3, size // 2, 2, size // 2, 2).mean(axis=(3, 5))
        return torch.from_numpy(np.ascontiguousarray(x).reshape(batch, features))

    def preprocess_torch(r, flip):
        x = (r.to(device, non_blocking=True).float() - mean_t) / std_t
        if flip:
            x = x.flip(-1)
        return nn.functional.avg_pool2d(x, 2).reshape(batch, features)

    def step(i):
        if args.fixed:
            x = preprocess_torch(raw_t[i % 2], i % 2 == 1)
        else:
            x = preprocess_numpy(raw[i % 2], i % 2 == 1).to(device)
        with common.autocast(device):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    times = common.run(args, device, step)
    common.report("low-utilization", args, device, times, batch=batch, image=size,
                  preprocessing="gpu" if args.fixed else "numpy on the training thread")


if __name__ == "__main__":
    main()
