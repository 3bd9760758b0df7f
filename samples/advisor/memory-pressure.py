"""memory-pressure: training with the GPU nearly full. A ballast tensor takes
all device memory but ~1.2x what a step needs at its peak (scaled down from a
model that really fills the GPU), and the batch size alternates. When a large
step finds the cache holding the small step's blocks, cudaMalloc fails, the
caching allocator frees its cache (cudaFree synchronizes the device) and
allocates again, every other step. --fixed splits each batch into two
micro-batches with gradient accumulation: half the activation peak, same
effective batch, no retries.

  python memory-pressure.py --steps 20 [--fixed]
"""

import torch
from torch import nn

import advisor_common as common

HEADROOM = 1.2      # device memory left beside the ballast, in units of the step's peak
SMALL_BATCH = 0.6   # every other step runs this fraction of the batch


def main():
    args, device = common.finish(common.parser(__doc__.splitlines()[0], cpu_steps=3, cuda_steps=20).parse_args())
    cuda = device.type == "cuda"
    batch, width, layers = (16384, 4096, 8) if cuda else (64, 64, 2)
    mods = []
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.GELU()]
    model = nn.Sequential(*mods).to(device)
    opt = common.optimizer(model.parameters(), device)
    big = torch.randn(batch, width, device=device)
    small = big[: int(batch * SMALL_BATCH)].clone()

    def train(x, parts):
        for chunk in x.chunk(parts):
            with common.autocast(device):
                loss = model(chunk).float().square().mean() / parts
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    ballast = None
    peak = 0
    if cuda:
        # The peak of a full-batch step, measured, then the ballast around it.
        for _ in range(2):
            train(big, 1)
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated()
        torch.cuda.empty_cache()
        free, _ = torch.cuda.mem_get_info()
        ballast = torch.empty(max(0, free - int(peak * HEADROOM)), dtype=torch.uint8, device=device)

    parts = 2 if args.fixed else 1

    def step(i):
        train(big if i % 2 == 0 else small, parts)

    times = common.run(args, device, step)
    common.report("memory-pressure", args, device, times, step_peak_bytes=peak,
                  ballast_bytes=ballast.numel() if ballast is not None else 0, micro_batches=parts)


if __name__ == "__main__":
    main()
