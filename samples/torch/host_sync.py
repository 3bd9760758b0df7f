"""A training loop that calls .item() ~20 times per step: host syncs.

Each .item() makes the CPU wait until the GPU has finished everything queued
so far, so the CPU cannot run ahead and the GPU idles while the CPU launches
the next kernels. Here the culprit is per-parameter gradient-norm logging (one
.item() per parameter: 10 layers x weight+bias = 20 per step). The fix: keep
the values on the GPU (torch.stack the norms) and read them once, or less often.

  python host_sync.py --steps 50
  python host_sync.py --profile sync_trace.json
"""

import torch
from torch import nn

import sample_common


def main():
    parser = sample_common.base_parser(__doc__.splitlines()[0], cpu_steps=10, cuda_steps=100)
    parser.add_argument("--layers", type=int, default=10, help="2 .item() calls per layer")
    parser.add_argument("--width", type=int, default=None, help="default 1024 on cuda, 128 on cpu")
    parser.add_argument("--batch", type=int, default=None, help="default 256 on cuda, 64 on cpu")
    args = sample_common.finish_args(parser.parse_args())
    device = torch.device(args.device)
    on_cuda = device.type == "cuda"
    width = args.width or (1024 if on_cuda else 128)
    batch = args.batch or (256 if on_cuda else 64)
    torch.manual_seed(0)

    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*layers).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    inputs = torch.randn(batch, width, device=device)
    item_calls = [0]
    grad_norms = {}

    def step(_):
        optimizer.zero_grad(set_to_none=True)
        loss = model(inputs).pow(2).mean()
        loss.backward()
        # The anti-pattern: a device-to-host read (and a full sync) per value.
        for name, param in model.named_parameters():
            grad_norms[name] = param.grad.norm().item()
            item_calls[0] += 1
        optimizer.step()

    times_ms = sample_common.run_steps(args, device, step)
    sample_common.report(
        "host_sync", args, device, times_ms,
        layers=args.layers, width=width, batch=batch,
        item_calls_per_step=item_calls[0] // max(1, args.warmup + args.steps),
        item_calls_total=item_calls[0],
    )


if __name__ == "__main__":
    main()
