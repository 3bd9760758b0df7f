"""channels-last: a bf16 convolutional net kept in the default NCHW layout.
Tensor-core convolutions want NHWC, so cuDNN transposes activations and
gradients before and after each convolution. --fixed converts the model and
its input to torch.channels_last.

  python channels-last.py --steps 30 [--fixed]
"""

import torch
from torch import nn

import advisor_common as common


def main():
    args, device = common.finish(common.parser(__doc__.splitlines()[0], cpu_steps=3, cuda_steps=30).parse_args())
    cuda = device.type == "cuda"
    batch, channels, size, depth = (128, 128, 56, 6) if cuda else (4, 8, 16, 2)
    layers = [nn.Conv2d(3, channels, 3, padding=1), nn.ReLU()]
    for _ in range(depth):
        layers += [nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU()]
    model = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, 10)).to(device)
    x = torch.randn(batch, 3, size, size, device=device)
    y = torch.randint(0, 10, (batch,), device=device)
    if args.fixed:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    opt = common.optimizer(model.parameters(), device)
    loss_fn = nn.CrossEntropyLoss()

    def step(_):
        with common.autocast(device):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    times = common.run(args, device, step)
    common.report("channels-last", args, device, times, batch=batch, channels=channels, size=size,
                  memory_format="channels_last" if args.fixed else "contiguous (NCHW)")


if __name__ == "__main__":
    main()
