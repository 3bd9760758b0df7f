"""Big matmuls: a stack of square Linear layers trained with SGD.

GPU-bound, the healthy case: kernels run back to back and the GPU is busy
nearly all the time. On an H200 with the cuda defaults (6 layers of
8192x8192 in bf16, batch 8192, ~20 TFLOP per step) a step takes about 28 ms.

  python compute_bound.py --steps 20
  python compute_bound.py --profile compute_trace.json
  python compute_bound.py --device cpu --steps 3     # small sizes on cpu
"""

import statistics

import torch
from torch import nn

import sample_common

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def main():
    parser = sample_common.base_parser(__doc__.splitlines()[0], cpu_steps=5, cuda_steps=20)
    parser.add_argument("--dim", type=int, default=None, help="default 8192 on cuda, 256 on cpu")
    parser.add_argument("--batch", type=int, default=None, help="default = dim")
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--dtype", choices=sorted(DTYPES), default=None,
                        help="default bf16 on cuda, fp32 on cpu")
    args = sample_common.finish_args(parser.parse_args())
    device = torch.device(args.device)
    on_cuda = device.type == "cuda"
    dim = args.dim or (8192 if on_cuda else 256)
    batch = args.batch or dim
    dtype_name = args.dtype or ("bf16" if on_cuda else "fp32")
    dtype = DTYPES[dtype_name]
    torch.manual_seed(0)

    layers = []
    for _ in range(args.layers):
        layers += [nn.Linear(dim, dim, bias=False), nn.ReLU()]
    model = nn.Sequential(*layers).to(device=device, dtype=dtype)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    inputs = torch.randn(batch, dim, device=device, dtype=dtype)

    def step(_):
        optimizer.zero_grad()
        # A loss that needs no labels; its only job is to start backward.
        loss = model(inputs).float().pow(2).mean()
        loss.backward()
        optimizer.step()

    times_ms = sample_common.run_steps(args, device, step)
    # Forward is one matmul per layer, backward two (grad input, grad weight).
    flops_per_step = 6 * batch * dim * dim * args.layers
    median_s = statistics.median(times_ms) / 1000.0 if times_ms else 0
    sample_common.report(
        "compute_bound", args, device, times_ms,
        dim=dim, batch=batch, layers=args.layers, dtype=dtype_name,
        flops_per_step=flops_per_step,
        achieved_tflops=round(flops_per_step / median_s / 1e12, 3) if median_s else None,
    )


if __name__ == "__main__":
    main()
