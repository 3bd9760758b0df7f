"""recompile: a compiled model fed batches of a new length every step
(variable-length sequences without padding buckets) and compiled with
dynamic=False: torch.compile specializes on each new shape and compiles the
forward and backward again, inside the step, every step. --fixed compiles with
dynamic=True, so one compile in the first step serves every length.

  python recompile.py --steps 6 [--fixed]
"""

import torch
from torch import nn

import advisor_common as common


def main():
    args, device = common.finish(
        common.parser(__doc__.splitlines()[0], cpu_steps=3, cuda_steps=6, warmup=2).parse_args())
    cuda = device.type == "cuda"
    compiled = common.compile_available(device)
    width, tokens = (1024, 8192) if cuda else (64, 256)
    model = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)).to(device)
    opt = common.optimizer(model.parameters(), device)
    forward = model
    if compiled:
        from torch import _dynamo

        # Every length is new: let it keep recompiling instead of falling back
        # to eager after the default 8 specializations.
        for limit in ("recompile_limit", "cache_size_limit"):
            if hasattr(_dynamo.config, limit):
                setattr(_dynamo.config, limit, 1000)
        forward = torch.compile(model, dynamic=bool(args.fixed))

    def step(i):
        x = torch.randn(tokens + 8 * i, width, device=device)  # a length not seen before
        with common.autocast(device):
            loss = forward(x).float().square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    times = common.run(args, device, step)
    common.report("recompile", args, device, times, compiled=compiled, dynamic=bool(args.fixed),
                  note=None if compiled else "torch.compile unavailable here: ran eagerly")


if __name__ == "__main__":
    main()
