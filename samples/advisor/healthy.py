"""healthy: what the advisor should leave alone. bf16 autocast matmuls on
tensor cores, DataLoader workers with pinned memory and non_blocking copies,
a fused optimizer, no host synchronizations inside the step. No finding
should claim more than 5 % of the step. --fixed changes nothing.

  python healthy.py --steps 40
"""

import torch
from torch import nn

import advisor_common as common


class Batches(torch.utils.data.Dataset):
    """Whole batches, made once: the workers only hand them over."""

    def __init__(self, n, batch, features, classes):
        g = torch.Generator().manual_seed(0)
        self.x = [torch.randn(batch, features, generator=g) for _ in range(n)]
        self.y = [torch.randint(0, classes, (batch,), generator=g) for _ in range(n)]

    def __len__(self):
        return 1_000_000

    def __getitem__(self, i):
        return self.x[i % len(self.x)], self.y[i % len(self.y)]


def main():
    p = common.parser(__doc__.splitlines()[0], cpu_steps=5, cuda_steps=40)
    p.add_argument("--compile", action="store_true",
                   help="torch.compile the model (a control: measures what compiling would save here)")
    args, device = common.finish(p.parse_args())
    cuda = device.type == "cuda"
    batch, width, layers, features, classes = (8192, 4096, 8, 256, 1000) if cuda else (64, 128, 3, 32, 10)
    mods = [nn.Linear(features, width), nn.GELU()]
    for _ in range(layers - 1):
        mods += [nn.Linear(width, width), nn.GELU()]
    model = nn.Sequential(*mods, nn.Linear(width, classes)).to(device)
    if args.compile and common.compile_available(device):
        model = torch.compile(model)
    opt = common.optimizer(model.parameters(), device)
    loader = torch.utils.data.DataLoader(
        Batches(4, batch, features, classes), batch_size=None, shuffle=False,
        num_workers=2, pin_memory=cuda, prefetch_factor=4, persistent_workers=True)
    it = iter(loader)
    loss_fn = nn.CrossEntropyLoss()

    def step(_):
        x, y = next(it)
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        with common.autocast(device):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    times = common.run(args, device, step)
    common.report("healthy", args, device, times, batch=batch, width=width, layers=layers)


if __name__ == "__main__":
    main()
