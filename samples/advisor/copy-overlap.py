"""copy-overlap: each step copies a 256 MB batch from pinned memory with
non_blocking=True, but on the compute stream, right before the compute that
needs it: the copy engine and the SMs take turns. --fixed copies the next
batch on a side stream while the current step computes.

  python copy-overlap.py --steps 30 [--fixed]
"""

import torch
from torch import nn

import advisor_common as common


def main():
    args, device = common.finish(common.parser(__doc__.splitlines()[0], cpu_steps=3, cuda_steps=30).parse_args())
    cuda = device.type == "cuda"
    batch, features, width, layers = (16384, 4096, 4096, 4) if cuda else (64, 64, 64, 2)
    mods = [nn.Linear(features, width), nn.ReLU()]
    for _ in range(layers - 1):
        mods += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*mods, nn.Linear(width, 1)).to(device)
    opt = common.optimizer(model.parameters(), device)
    host = [torch.randn(batch, features) for _ in range(2)]
    if cuda:
        host = [h.pin_memory() for h in host]
    side = torch.cuda.Stream() if cuda and args.fixed else None
    ready = {}

    def to_device(i):
        src = host[i % len(host)]
        if side is None:
            return src.to(device, non_blocking=cuda)
        with torch.cuda.stream(side):
            return src.to(device, non_blocking=True)

    def step(i):
        if side is None:
            x = to_device(i)
        else:
            if "next" not in ready:
                ready["next"] = to_device(i)
            torch.cuda.current_stream().wait_stream(side)
            x = ready.pop("next")
            x.record_stream(torch.cuda.current_stream())
            ready["next"] = to_device(i + 1)  # overlaps with this step's compute
        with common.autocast(device):
            loss = model(x).float().square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    times = common.run(args, device, step)
    common.report("copy-overlap", args, device, times, batch_bytes=batch * features * 4,
                  side_stream=side is not None)


if __name__ == "__main__":
    main()
