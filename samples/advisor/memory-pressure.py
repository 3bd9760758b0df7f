"""memory-pressure: training with the GPU nearly full. A ballast tensor takes
all device memory but 1.2x the activations a step needs at its peak (scaled
down from a model that really fills the GPU), and the batch size alternates.
The allocator does not split blocks over 128 MB (max_split_size_mb, a common
setting against fragmentation), so each step's activations need blocks of
their own size; both sizes do not fit at once, so every step cudaMalloc fails,
the caching allocator frees its cache (cudaFree synchronizes the device) and
allocates again. --fixed splits each batch into two micro-batches with
gradient accumulation: half the activation peak, same effective batch, both
sizes stay cached, no retries.

  python memory-pressure.py --steps 20 [--fixed]
"""

import os

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "max_split_size_mb:128")  # before CUDA starts

import torch  # noqa: E402
from torch import nn  # noqa: E402

import advisor_common as common  # noqa: E402

HEADROOM = 1.2      # memory left beside the ballast, in units of one step's activation peak
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
        # What a full-batch step needs beyond the weights and optimizer state, measured,
        # then the ballast around it.
        for _ in range(2):
            train(big, 1)
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - torch.cuda.memory_allocated()
        torch.cuda.empty_cache()
        free, _ = torch.cuda.mem_get_info()
        ballast = torch.empty(max(0, free - int(peak * HEADROOM)), dtype=torch.uint8, device=device)

    parts = 2 if args.fixed else 1

    def step(i):
        train(big if i % 2 == 0 else small, parts)

    times = common.run(args, device, step)
    common.report("memory-pressure", args, device, times, step_activation_peak_bytes=peak,
                  ballast_bytes=ballast.numel() if ballast is not None else 0, micro_batches=parts)


if __name__ == "__main__":
    main()
