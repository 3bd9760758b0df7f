#!/usr/bin/env python3
"""A training step captured once into a CUDA graph and replayed, each replay inside a
`ProfilerStep#N` range so that the torch plugin reports step boundaries (where a sampled
recording with GPUSCOPE_CUPTI_FINALIZE=1 tears CUPTI down). The host never waits for the
GPU inside the loop, so replays queue up ahead of it: a teardown that does not drain the
device first meets instrumented kernels in flight.

  python3 graph_steps.py --seconds 6
Prints one JSON line: steps, seconds, the loss at the end (finite when the job was unharmed).
"""
import argparse
import json
import math
import time

import torch
from torch import nn


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=6.0)
    args = p.parse_args()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    layers = []
    for _ in range(24):
        layers += [nn.Linear(256, 256), nn.ReLU()]
    model = nn.Sequential(*layers).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(64, 256, device=dev)
    y = torch.randn(64, 256, device=dev)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()

    steps = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < args.seconds:
        with torch.profiler.record_function(f"ProfilerStep#{steps}"):
            graph.replay()
        steps += 1
    torch.cuda.synchronize()
    final = float(loss.item())
    print(json.dumps({"steps": steps, "seconds": round(time.perf_counter() - t0, 3), "loss": final}))
    return 0 if math.isfinite(final) else 1


if __name__ == "__main__":
    raise SystemExit(main())
