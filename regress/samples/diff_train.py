"""A small GPU-bound training loop for checking `gpuscope diff` end to end.

Each step runs one elementwise sin() over the input batch (a stand-in for a
feature transform), an MLP forward and backward, and an SGD step. The run is
GPU bound, so GPU time is step time.

--slow-sin PCT makes that one kernel slower: sin() runs over a k-times larger
slice of its input and only the first rows are used, so the kernel's name,
launch count and every other kernel stay the same while its time grows k-fold.
k is calibrated before the first training step so that the step grows by about
PCT %, whatever the GPU. Every step is an NVTX range "train_step", so steps are
found even without the torch plugin.

  python diff_train.py --steps 40                  # the baseline
  python diff_train.py --steps 40 --slow-sin 25    # sin ~k x slower, step ~+25 %
  python diff_train.py --steps 40 --profile t.json # under torch.profiler
"""

import argparse
import contextlib
import inspect
import json
import statistics
import sys
import time

import torch
from torch import nn


def nvtx(name):
    """An NVTX range when CUDA torch is present; nothing on CPU builds."""
    if torch.cuda.is_available():
        return torch.cuda.nvtx.range(name)
    return contextlib.nullcontext()


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed_ms(device, fn, reps):
    """Median wall time of fn() in ms, each call closed by a device sync."""
    times = []
    for _ in range(reps):
        sync(device)
        t0 = time.perf_counter()
        fn()
        sync(device)
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times)


def main():
    cuda = torch.cuda.is_available()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda" if cuda else "cpu")
    p.add_argument("--steps", type=int, default=40 if cuda else 12)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=None, help="default 8192 on cuda, 256 on cpu")
    p.add_argument("--hidden", type=int, default=None, help="default 1024 on cuda, 256 on cpu")
    p.add_argument("--slow-sin", type=float, default=0.0, metavar="PCT",
                   help="make the sin kernel slower so the step grows by about PCT percent")
    p.add_argument("--max-factor", type=int, default=128, help="cap on the sin slice factor k")
    p.add_argument("--profile", metavar="OUT.json", default=None, help="run under torch.profiler, write a chrome trace")
    args = p.parse_args()
    device = torch.device(args.device)
    batch = args.batch or (8192 if device.type == "cuda" else 256)
    hidden = args.hidden or (1024 if device.type == "cuda" else 256)
    torch.manual_seed(0)

    model = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                          nn.Linear(hidden, 10)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    targets = torch.randint(0, 10, (batch,), device=device)

    factor = 1
    if args.slow_sin > 0:
        # Calibrate without an optimizer step, so no training step is recorded yet.
        probe = torch.randn(batch, hidden, device=device)

        def fwd_bwd():
            model(torch.sin(probe)).sum().backward()

        step_ms = timed_ms(device, fwd_bwd, 5)
        sin_ms = timed_ms(device, lambda: torch.sin(probe), 20)
        model.zero_grad(set_to_none=True)
        factor = 1 + int(round(args.slow_sin / 100.0 * step_ms / max(sin_ms, 1e-6)))
        factor = max(2, min(factor, args.max_factor))
        print("diff_train: step %.3f ms, sin %.3f ms -> sin over %dx the rows" % (step_ms, sin_ms, factor), file=sys.stderr)
        del probe
    raw = torch.randn(batch * factor, hidden, device=device)

    def step():
        with nvtx("train_step"):
            feats = torch.sin(raw)[:batch]  # factor 1: exactly the batch
            loss = loss_fn(model(feats), targets)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()

    times = []
    profiler = contextlib.nullcontext()
    if args.profile:
        acts = [torch.profiler.ProfilerActivity.CPU]
        if device.type == "cuda":
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        # A schedule that always records, so the trace has ProfilerStep#N ranges.
        options = dict(activities=acts, schedule=lambda s: torch.profiler.ProfilerAction.RECORD)
        # torch 2.x drops events between schedule cycles unless told to keep them.
        if "acc_events" in inspect.signature(torch.profiler.profile.__init__).parameters:
            options["acc_events"] = True
        profiler = torch.profiler.profile(**options)
    with profiler as prof:
        for i in range(args.warmup + args.steps):
            t0 = time.perf_counter()
            step()
            sync(device)
            if i >= args.warmup:
                times.append((time.perf_counter() - t0) * 1000.0)
            if prof is not None:
                prof.step()
    if args.profile:
        prof.export_chrome_trace(args.profile)
    print("GPUSCOPE_SAMPLE " + json.dumps({
        "sample": "diff_train", "device": str(device), "steps": args.steps, "batch": batch, "hidden": hidden,
        "sin_factor": factor, "median_step_ms": round(statistics.median(times), 3),
    }))


if __name__ == "__main__":
    main()
