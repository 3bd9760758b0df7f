"""amp: an fp32 MLP whose matmuls run on CUDA cores (TF32 off, as torch's
default for matmuls is). --fixed runs forward and loss under
torch.autocast(bfloat16), so the matmuls use tensor cores.

  python amp.py --steps 20 [--fixed]
"""

import torch
from torch import nn

import advisor_common as common


def main():
    args, device = common.finish(common.parser(__doc__.splitlines()[0], cpu_steps=3, cuda_steps=20).parse_args())
    cuda = device.type == "cuda"
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = False  # the plain fp32 path, explicit
    batch, width, layers = (4096, 4096, 4) if cuda else (64, 128, 2)
    mods = []
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*mods).to(device)
    opt = common.optimizer(model.parameters(), device)
    x = torch.randn(batch, width, device=device)
    target = torch.randn(batch, width, device=device)

    def step(_):
        with common.autocast(device, enabled=args.fixed):
            loss = nn.functional.mse_loss(model(x).float(), target)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    times = common.run(args, device, step)
    common.report("amp", args, device, times, batch=batch, width=width, layers=layers,
                  dtype="bfloat16 autocast" if args.fixed and cuda else "float32")


if __name__ == "__main__":
    main()
