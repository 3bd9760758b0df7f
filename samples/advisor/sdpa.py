"""sdpa: self-attention written out as matmul -> scale -> softmax -> matmul
(bf16 autocast). The full seq x seq score matrix goes to memory and back,
forward and backward. --fixed calls
torch.nn.functional.scaled_dot_product_attention, which runs fused
(flash or memory-efficient) attention kernels.

  python sdpa.py --steps 20 [--fixed]
"""

import math

import torch
from torch import nn

import advisor_common as common


class Attention(nn.Module):
    def __init__(self, dim, heads, fused):
        super().__init__()
        self.heads, self.fused = heads, fused
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if self.fused:
            o = nn.functional.scaled_dot_product_attention(q, k, v)
        else:
            scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
            o = scores.softmax(dim=-1) @ v
        return x + self.out(o.transpose(1, 2).reshape(b, s, d))


def main():
    args, device = common.finish(common.parser(__doc__.splitlines()[0], cpu_steps=3, cuda_steps=20).parse_args())
    cuda = device.type == "cuda"
    batch, seq, dim, heads, layers = (8, 2048, 1024, 16, 4) if cuda else (2, 64, 64, 4, 2)
    fused = args.fixed and hasattr(nn.functional, "scaled_dot_product_attention")
    model = nn.Sequential(*[Attention(dim, heads, fused) for _ in range(layers)]).to(device)
    opt = common.optimizer(model.parameters(), device)
    x = torch.randn(batch, seq, dim, device=device)

    def step(_):
        with common.autocast(device):
            loss = model(x).float().square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    times = common.run(args, device, step)
    common.report("sdpa", args, device, times, batch=batch, seq=seq, heads=heads, layers=layers, fused=fused,
                  note=None if fused or not args.fixed else "scaled_dot_product_attention unavailable: ran unfused")


if __name__ == "__main__":
    main()
