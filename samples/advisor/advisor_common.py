"""What the advisor samples share: options (--fixed on top of samples/torch's
common ones), a step loop timed without a per-step device sync, NVTX step
ranges, and the GPUSCOPE_SAMPLE result line.

Each sample plants one bottleneck that `gpuscope analyze` reports under the
rule id it is named after; `--fixed` applies the fix the finding suggests.
Steps are timed with CUDA events on the GPU (so the loop never synchronizes,
which would itself be a host-sync bottleneck) and with the wall clock on CPU.
"""

import inspect
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "torch"))
import sample_common  # noqa: E402  (samples/torch/sample_common.py)

STEP_RANGE = "train_step"


def parser(description, cpu_steps, cuda_steps, warmup=3):
    p = sample_common.base_parser(description, cpu_steps=cpu_steps, cuda_steps=cuda_steps, profile=False)
    p.add_argument("--fixed", action="store_true", help="apply the fix the analyzer suggests")
    p.set_defaults(warmup=warmup)
    return p


def finish(args):
    args = sample_common.finish_args(args)
    torch.manual_seed(0)
    return args, torch.device(args.device)


def compile_available(device):
    """torch.compile with Inductor needs torch 2.x and, on the GPU, Triton."""
    if not hasattr(torch, "compile") or device.type != "cuda":
        return False
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


def optimizer(params, device, lr=1e-3, sgd=False, **kw):
    """AdamW, fused on CUDA where this torch has it, else foreach (one launch per
    group of tensors instead of per tensor)."""
    cls = torch.optim.SGD if sgd else torch.optim.AdamW
    sig = inspect.signature(cls.__init__).parameters
    if device.type == "cuda" and "fused" in sig and not sgd:
        return cls(params, lr=lr, fused=True, **kw)
    if "foreach" in sig and "foreach" not in kw:
        kw["foreach"] = True
    return cls(params, lr=lr, **kw)


def autocast(device, enabled=True):
    """bf16 autocast on CUDA; a no-op context elsewhere (CPU bf16 is slow on old torch)."""
    if device.type == "cuda" and enabled:
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return torch.autocast(device_type="cpu", enabled=False)


class _Nvtx:
    def __init__(self, device):
        self.on = device.type == "cuda"

    def __enter__(self):
        if self.on:
            torch.cuda.nvtx.range_push(STEP_RANGE)

    def __exit__(self, *exc):
        if self.on:
            torch.cuda.nvtx.range_pop()


def run(args, device, step_fn):
    """Runs args.warmup + args.steps steps of step_fn(i), each inside an NVTX
    range named train_step (the analyzer's step fallback when no torch plugin
    records optimizer steps). Returns the measured steps' times in ms."""
    for i in range(args.warmup):
        with _Nvtx(device):
            step_fn(i)
    sample_common.sync(device)
    if device.type == "cuda":
        marks = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps + 1)]
        marks[0].record()
        for i in range(args.steps):
            with _Nvtx(device):
                step_fn(args.warmup + i)
            marks[i + 1].record()
        torch.cuda.synchronize(device)
        return [marks[i].elapsed_time(marks[i + 1]) for i in range(args.steps)]
    times = []
    for i in range(args.steps):
        t0 = time.perf_counter()
        step_fn(args.warmup + i)
        times.append((time.perf_counter() - t0) * 1000.0)
    return times


def report(rule, args, device, times_ms, **facts):
    facts.setdefault("fixed", bool(args.fixed))
    facts.setdefault("rule", rule)
    sample_common.report("advisor_" + rule.replace("-", "_"), args, device, times_ms, **facts)


def median(v):
    return statistics.median(v) if v else None
