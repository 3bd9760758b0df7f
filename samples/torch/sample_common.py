"""What every torch sample shares: common options, step timing, the optional
torch.profiler run, and the one GPUSCOPE_SAMPLE result line.

Kept to plain torch APIs that exist in both torch 1.13 and 2.x, so the samples
run on Debian's CPU torch as well as on the GPU machine's CUDA torch.
"""

import argparse
import contextlib
import inspect
import json
import os
import statistics
import sys
import time

import torch

RESULT_PREFIX = "GPUSCOPE_SAMPLE "


def base_parser(description, cpu_steps, cuda_steps, profile=True):
    """Options every sample takes; step defaults differ by device because the
    CPU check must stay short while a GPU run needs enough steps to measure."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--device", choices=["cuda", "cpu"],
                        default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--steps", type=int, default=None,
                        help="measured steps (default %d on cpu, %d on cuda)" % (cpu_steps, cuda_steps))
    parser.add_argument("--warmup", type=int, default=2,
                        help="steps run before the measured ones, not timed")
    if profile:
        parser.add_argument("--profile", metavar="OUT.json", default=None,
                            help="run under torch.profiler and write a chrome trace here")
    else:
        parser.set_defaults(profile=None)
    parser.set_defaults(_cpu_steps=cpu_steps, _cuda_steps=cuda_steps)
    return parser


def finish_args(args):
    """Fills defaults that depend on the chosen device."""
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("error: --device cuda but torch.cuda.is_available() is False")
    if args.steps is None:
        args.steps = args._cuda_steps if args.device == "cuda" else args._cpu_steps
    return args


def sync(device):
    """Waits for queued GPU work so wall-clock step times are the real ones."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@contextlib.contextmanager
def maybe_profile(path, device):
    """Yields a callable to mark step ends: prof.step() under the profiler, so
    the trace holds ProfilerStep#N ranges; a no-op otherwise."""
    if not path:
        yield lambda: None
        return
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    # A schedule that always records: without any schedule, torch leaves out
    # the ProfilerStep#N ranges that mark steps in the trace.
    always = lambda step: torch.profiler.ProfilerAction.RECORD  # noqa: E731
    options = dict(activities=activities, record_shapes=True, schedule=always)
    # torch 2.x warns that a schedule drops events between cycles unless told
    # to keep them; this run is one cycle, so keeping them changes nothing.
    if "acc_events" in inspect.signature(torch.profiler.profile.__init__).parameters:
        options["acc_events"] = True
    with torch.profiler.profile(**options) as prof:
        yield prof.step
    prof.export_chrome_trace(path)
    maybe_profile.last = prof


maybe_profile.last = None


def count_device_events(prof):
    """GPU-side events (kernels, memcpy, memset) in a finished profile, for
    comparison with what gpuscope records; None when it cannot be counted."""
    if prof is None:
        return None
    try:
        return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    except Exception:  # the events API differs across torch versions
        return None


def calibrate_ms(reps=7):
    """How fast this process runs plain Python (objects, dicts, lists): the
    fastest of `reps` runs of a fixed piece of work, in ms. bench/overhead.py
    divides step times by it (GPUSCOPE_CALIBRATE=1), because one process of a
    launch-bound loop runs ±20 % slower than another on the same machine, start-up
    included. No torch op and no CUDA call, so a profiler in the process does not
    touch it."""
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        table = {}
        for i in range(300000):
            key = ("k", i % 997)
            entry = table.get(key)
            if entry is None:
                entry = table[key] = []
            entry.append(i * 3 + len(entry))
        total = sum(len(v) for v in table.values())
        best = min(best, (time.perf_counter() - t0) * 1000.0)
    assert total == 300000
    return round(best, 3)


def run_steps(args, device, step_fn):
    """Runs warmup + measured steps of step_fn(i); returns the measured step
    times in ms. Each step ends with a device sync so its time is complete."""
    times_ms = []
    with maybe_profile(args.profile, device) as mark_step:
        for i in range(args.warmup + args.steps):
            t0 = time.perf_counter()
            step_fn(i)
            sync(device)
            if i >= args.warmup:
                times_ms.append((time.perf_counter() - t0) * 1000.0)
            mark_step()
    return times_ms


def report(sample, args, device, times_ms, device_facts=True, **facts):
    """Prints the one result line: measured facts, then sample-specific ones.
    device_facts=False keeps a process that ran no GPU work off the GPU."""
    result = {
        "sample": sample,
        "torch": torch.__version__,
        "device": str(device),
        "steps": args.steps,
        "warmup": args.warmup,
        "median_step_ms": round(statistics.median(times_ms), 3) if times_ms else None,
        "min_step_ms": round(min(times_ms), 3) if times_ms else None,
        "max_step_ms": round(max(times_ms), 3) if times_ms else None,
        "total_measured_s": round(sum(times_ms) / 1000.0, 4),
    }
    if device.type == "cuda" and device_facts:
        result["gpu"] = torch.cuda.get_device_name(device)
        result["max_memory_allocated"] = torch.cuda.max_memory_allocated(device)
        result["max_memory_reserved"] = torch.cuda.max_memory_reserved(device)
    if getattr(args, "profile", None):
        result["profile"] = args.profile
        events = count_device_events(maybe_profile.last)
        result["profiled_device_events"] = events
        # Every step (warmup too) is inside the profile.
        if events is not None:
            result["profiled_device_events_per_step"] = round(events / (args.warmup + args.steps), 1)
    if os.environ.get("GPUSCOPE_CALIBRATE") == "1":
        result["calibration_ms"] = calibrate_ms()
    result.update(facts)
    sys.stdout.write(RESULT_PREFIX + json.dumps(result, sort_keys=False) + "\n")
    sys.stdout.flush()
