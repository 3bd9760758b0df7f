"""pageable-memcpy: every step copies a 128 MB batch to the GPU from ordinary
(pageable) host memory, which the driver stages chunk by chunk through its own
pinned buffer. --fixed pins the host batches once and copies with
non_blocking=True.

  python pageable-memcpy.py --steps 30 [--fixed]
"""

import torch
from torch import nn

import advisor_common as common


def main():
    args, device = common.finish(common.parser(__doc__.splitlines()[0], cpu_steps=3, cuda_steps=30).parse_args())
    cuda = device.type == "cuda"
    batch, features, width = (16384, 2048, 2048) if cuda else (64, 64, 64)
    model = nn.Sequential(nn.Linear(features, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                          nn.Linear(width, 1)).to(device)
    opt = common.optimizer(model.parameters(), device)
    # A few host batches, made once (so making them is not what the step measures).
    host = [torch.randn(batch, features) for _ in range(3)]
    if args.fixed and cuda:
        host = [h.pin_memory() for h in host]

    def step(i):
        x = host[i % len(host)].to(device, non_blocking=args.fixed)
        with common.autocast(device):
            loss = model(x).float().square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    times = common.run(args, device, step)
    common.report("pageable-memcpy", args, device, times, batch_bytes=batch * features * 4,
                  host_memory="pinned" if args.fixed and cuda else "pageable")


if __name__ == "__main__":
    main()
