"""A tiny, deep MLP at batch 32: launch-bound.

Every kernel is so small that the GPU finishes it before the CPU has launched
the next one, so the step time is set by how fast Python and the CUDA runtime
can launch ~600 kernels per step (40 Linear+ReLU layers: forward, backward
and a per-parameter, non-foreach SGD update; ~14 kernels per layer with
torch 2.11 on an H200), and the GPU sits mostly idle.
The usual fixes: CUDA graphs / torch.compile, a fused or foreach optimizer,
fewer and larger layers, bigger batches.

  python launch_bound.py --steps 50
  python launch_bound.py --profile launch_trace.json
"""

import torch
from torch import nn

import sample_common


def main():
    parser = sample_common.base_parser(__doc__.splitlines()[0], cpu_steps=20, cuda_steps=100)
    parser.add_argument("--layers", type=int, default=40)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    args = sample_common.finish_args(parser.parse_args())
    device = torch.device(args.device)
    torch.manual_seed(0)

    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(args.width, args.width), nn.ReLU()]
    layers.append(nn.Linear(args.width, 10))
    model = nn.Sequential(*layers).to(device)
    # foreach=False: one small kernel per parameter and operation, the
    # unfused update many training loops still run.
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9, foreach=False)
    loss_fn = nn.CrossEntropyLoss()
    inputs = torch.randn(args.batch, args.width, device=device)
    targets = torch.randint(0, 10, (args.batch,), device=device)

    def step(_):
        # set_to_none explicitly: torch 1.13 would otherwise zero every grad
        # with a kernel of its own, torch 2.x would not.
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()

    times_ms = sample_common.run_steps(args, device, step)
    sample_common.report(
        "launch_bound", args, device, times_ms,
        layers=args.layers, width=args.width, batch=args.batch,
        parameters=sum(1 for _ in model.parameters()),
    )


if __name__ == "__main__":
    main()
