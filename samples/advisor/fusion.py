"""fusion: a hand-written activation of seven pointwise ops on a large tensor.
Eager PyTorch runs each op as its own kernel that reads and writes the whole
tensor, forward and backward. --fixed compiles the activation with
torch.compile, which fuses each chain into one Triton kernel (where torch.compile
is unavailable, e.g. torch 1.13 or CPU, --fixed runs eagerly and says so).

  python fusion.py --steps 30 [--fixed]
"""

import torch
from torch import nn

import advisor_common as common


def act(x, bias, scale):
    y = x + bias
    y = y * torch.sigmoid(1.702 * y)
    y = y * scale
    return y + 0.5 * x


class Block(nn.Module):
    def __init__(self, width, fn):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(width))
        self.scale = nn.Parameter(torch.ones(width))
        self.fn = fn

    def forward(self, x):
        return self.fn(x, self.bias, self.scale)


def main():
    args, device = common.finish(common.parser(__doc__.splitlines()[0], cpu_steps=3, cuda_steps=30, warmup=4).parse_args())
    cuda = device.type == "cuda"
    rows, width, blocks = (16384, 2048, 8) if cuda else (256, 64, 3)
    compiled = args.fixed and common.compile_available(device)
    fn = torch.compile(act) if compiled else act
    model = nn.Sequential(*[Block(width, fn) for _ in range(blocks)]).to(device)
    opt = common.optimizer(model.parameters(), device)
    x = torch.randn(rows, width, device=device, requires_grad=False)

    def step(_):
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    times = common.run(args, device, step)
    common.report("fusion", args, device, times, elements=rows * width, blocks=blocks, compiled=compiled,
                  note=None if compiled or not args.fixed else "torch.compile unavailable here: ran eagerly")


if __name__ == "__main__":
    main()
