"""launch-bound: 40 small Linear+ReLU layers at batch 32 with plain SGD:
hundreds of microsecond kernels per step, so the CPU's launch rate sets the
step time and the GPU mostly waits. --fixed captures the whole step (forward,
backward, optimizer) once into a CUDA graph and replays it: one launch a step.

  python launch-bound.py --steps 50 [--fixed]
"""

import torch
from torch import nn

import advisor_common as common


def main():
    args, device = common.finish(common.parser(__doc__.splitlines()[0], cpu_steps=3, cuda_steps=50).parse_args())
    cuda = device.type == "cuda"
    layers, width, batch = (40, 256, 32) if cuda else (8, 32, 8)
    mods = []
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*mods).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    static_x = torch.randn(batch, width, device=device)
    static_y = torch.randn(batch, width, device=device)
    host_x = [torch.randn(batch, width, device=device) for _ in range(4)]

    def eager_step():
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(static_x), static_y)
        loss.backward()
        opt.step()

    graph = None
    if args.fixed and cuda:
        # Whole-step capture as in the CUDA graphs section of the PyTorch docs:
        # warm up on a side stream, then capture with grads set to None.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                eager_step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            loss = nn.functional.mse_loss(model(static_x), static_y)
            loss.backward()
            opt.step()

    def step(i):
        static_x.copy_(host_x[i % len(host_x)])
        if graph is not None:
            graph.replay()
        else:
            eager_step()

    times = common.run(args, device, step)
    common.report("launch-bound", args, device, times, layers=layers, width=width, batch=batch,
                  cuda_graph=graph is not None)


if __name__ == "__main__":
    main()
