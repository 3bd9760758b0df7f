"""allocator-churn: torch.cuda.empty_cache() at the end of every step (a
common leftover from debugging memory). It returns every cached block to the
driver with cudaFree, which synchronizes the device, and the next step gets
them back with cudaMalloc. --fixed drops the call and lets the caching
allocator reuse its blocks.

  python allocator-churn.py --steps 30 [--fixed]
"""

import torch
from torch import nn

import advisor_common as common


def main():
    args, device = common.finish(common.parser(__doc__.splitlines()[0], cpu_steps=3, cuda_steps=30).parse_args())
    cuda = device.type == "cuda"
    batch, width, layers = (16384, 2048, 8) if cuda else (64, 64, 2)
    mods = []
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.GELU()]
    model = nn.Sequential(*mods).to(device)
    opt = common.optimizer(model.parameters(), device)
    x = torch.randn(batch, width, device=device)

    def step(_):
        with common.autocast(device):
            loss = model(x).float().square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if not args.fixed and cuda:
            torch.cuda.empty_cache()

    times = common.run(args, device, step)
    common.report("allocator-churn", args, device, times, empty_cache_per_step=not args.fixed)


if __name__ == "__main__":
    main()
