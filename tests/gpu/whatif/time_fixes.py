"""Times every fix of every model, alone and in its combinations, without any
profiler: the ground truth for gpuscope's what-if advisor.

Per model, in one process: the plain variant, each applicable fix alone and
the model's COMBOS are built and warmed up (compile happens in the warm-up),
then timed ALTERNATELY: for each block, for each variant, --steps steps with
one synchronize at the block's end. A variant's step_ms is the median of its
block means, so drift (clocks, heat, other variants' DataLoader workers) falls
on all variants alike.

Output: one JSON line per model appended to --out and flushed:
  {"model", "device", "plain_ms", "variants": {"amp": {"step_ms", "blocks_ms"}, ...},
   "errors": {"variant": "repr"}, "notes": [...], "seconds"}
and one line per variant on stdout as it goes.

Usage: python3 tests/gpu/whatif/time_fixes.py --models resnet50,bert --out r/timings.jsonl
       python3 tests/gpu/whatif/time_fixes.py --device cpu --tiny --models unet_gn,lstm_lm --out /tmp/t.jsonl
"""

import argparse
import contextlib
import gc
import json
import os
import signal
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402


class TimeLimit(BaseException):
    """Raised by SIGALRM. A BaseException so that library code catching
    Exception (compilers falling back, retries) does not swallow it."""


def on_alarm(signum, frame):
    raise TimeLimit("time limit")


@contextlib.contextmanager
def alarm(seconds):
    """Interrupts a build, warm-up or block that runs past seconds (a compile
    that never ends, a DataLoader that hangs)."""
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(max(1, int(seconds)))
    try:
        yield
    finally:
        signal.alarm(0)


def say(*a):
    print("[%s]" % time.strftime("%H:%M:%S"), *a, flush=True)


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def variants_of(fn):
    """plain, each fix alone, the combos; variants that compile last, so that a
    compile that eats the model's time costs only compile variants."""
    vs = [frozenset()] + [frozenset([f]) for f in fn.FIXES] + list(fn.COMBOS)
    seen, out = set(), []
    for v in vs:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out[:1] + sorted(out[1:], key=lambda v: "compile" in v)


def free(device):
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()
    dynamo = getattr(torch, "_dynamo", None)
    if dynamo is not None and hasattr(dynamo, "reset"):
        dynamo.reset()


def short(e):
    return repr(e)[:400]


def time_model(name, args):
    fn = models.MODELS[name]
    t0 = time.time()
    steps = max(args.steps, fn.STEPS or 0)
    built, errors, notes = {}, {}, []
    build_until = t0 + args.model_seconds * args.build_share

    # Build and warm up, in order (plain first).
    for fixes in variants_of(fn):
        k = models.key(fixes)
        # A captured graph that goes wrong takes the process's CUDA context with it:
        # graph variants run in processes of their own (--graphs no, then --only V).
        if fixes and args.only and k != args.only:
            continue
        if fixes and args.graphs == "no" and "cuda-graphs" in fixes:
            continue
        left = build_until - time.time()
        if not fixes:
            left = max(left, args.model_seconds / 2)  # the plain variant is always tried
        elif left < 3:
            errors[k] = "skipped: model time limit reached while building"
            say("%s %-40s SKIPPED: model time limit reached while building" % (name, k))
            continue
        tb = time.time()
        try:
            with alarm(left):
                models.set_defaults()
                torch.manual_seed(0)
                step = models.build(name, fixes, args.device, args.tiny)
                for _ in range(args.warmup):
                    step()
                sync(args.device)
            built[k] = step
            say("%s %-40s built and warmed up in %.1fs" % (name, k, time.time() - tb))
        except (Exception, TimeLimit) as e:
            step = None
            if not fixes and isinstance(e, ImportError):
                say("%s unavailable: %r" % (name, e))
                return dict(model=name, unavailable=short(e))
            errors[k] = short(e)
            say("%s %-40s ERROR (after %.1fs): %s" % (name, k, time.time() - tb, short(e)))
            gc.collect()

    skipped = [k for k, e in errors.items() if e.startswith("skipped")]
    if skipped:
        notes.append("not built (model time limit): " + ", ".join(skipped))

    # Alternate: each block times every variant in turn.
    blocks = {k: [] for k in built}
    for b in range(args.blocks):
        for k, step in list(built.items()):
            try:
                with alarm(max(30, args.model_seconds)):
                    sync(args.device)
                    t = time.perf_counter()
                    for _ in range(steps):
                        step()
                    sync(args.device)
                blocks[k].append(1000.0 * (time.perf_counter() - t) / steps)
            except (Exception, TimeLimit) as e:
                errors[k] = "timing: " + short(e)
                say("%s %-40s ERROR while timing: %s" % (name, k, short(e)))
                del built[k]
        if b + 1 >= args.min_blocks and time.time() - t0 > args.model_seconds:
            notes.append("stopped after %d blocks (model time limit)" % (b + 1))
            break

    variants = {}
    for k, ms in blocks.items():
        if not ms:
            continue
        variants[k] = dict(step_ms=round(statistics.median(ms), 3), blocks_ms=[round(m, 3) for m in ms])
    plain = variants.get("plain", {}).get("step_ms")
    for k, v in variants.items():
        saving = "" if not plain else "  (%+.1f%% vs plain)" % (100.0 * (v["step_ms"] - plain) / plain)
        say("%s %-40s %9.3f ms%s  blocks %s" % (name, k, v["step_ms"], saving, v["blocks_ms"]))
    built.clear()
    return dict(model=name, plain_ms=plain, variants=variants, errors=errors, notes=notes, steps=steps,
                warmup=args.warmup)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", help="comma list, or all (%s)" % ",".join(models.MODELS))
    p.add_argument("--out", help="JSONL file appended to")
    p.add_argument("--list", action="store_true", help="print each model's fixes and combinations")
    p.add_argument("--device", default="cuda")
    p.add_argument("--tiny", action="store_true", help="small models and batches (CPU smoke test)")
    p.add_argument("--steps", type=int, default=10, help="steps per timed block")
    p.add_argument("--blocks", type=int, default=5)
    p.add_argument("--min-blocks", type=int, default=3, help="blocks timed even past the model's time limit")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--model-seconds", type=float, default=75.0)
    p.add_argument("--build-share", type=float, default=0.65,
                   help="share of --model-seconds that building and warming up may take")
    p.add_argument("--graphs", choices=("all", "no"), default="all",
                   help="no: leave out variants with cuda-graphs (time each in its own process with --only)")
    p.add_argument("--only", help="time plain and this one variant (e.g. amp+cuda-graphs)")
    p.add_argument("--graph-variants", metavar="MODEL", help="print the model's cuda-graphs variants, one a line")
    p.add_argument("--deadline", type=float, default=0.0,
                   help="epoch seconds: no model starts unless it can finish before")
    args = p.parse_args()
    if args.list:
        for name, fn in models.MODELS.items():
            print("%-17s fixes: %s\n%-17s combos: %s" % (name, " ".join(fn.FIXES), "",
                                                        " ".join(models.key(c) for c in fn.COMBOS) or "-"))
        return
    if args.graph_variants:
        for v in variants_of(models.MODELS[args.graph_variants]):
            if "cuda-graphs" in v:
                print(models.key(v))
        return
    if not args.models or not args.out:
        p.error("--models and --out are needed")
    names = list(models.MODELS) if args.models == "all" else [m for m in args.models.replace(" ", ",").split(",") if m]
    unknown = [m for m in names if m not in models.MODELS]
    if unknown:
        p.error("unknown models: %s (known: %s)" % (", ".join(unknown), ", ".join(models.MODELS)))
    device_name = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    say("time_fixes: %s on %s, torch %s" % (",".join(names), device_name, torch.__version__))
    with open(args.out, "a") as out:
        for name in names:
            t0 = time.time()
            if args.deadline and t0 + args.model_seconds + 10 > args.deadline:
                say("%s SKIPPED: %.0fs left before the deadline" % (name, args.deadline - t0))
                row = dict(model=name, skipped="deadline")
            else:
                say("=== %s" % name)
                try:
                    row = time_model(name, args)
                except (Exception, TimeLimit) as e:
                    say("%s FAILED: %s" % (name, short(e)))
                    row = dict(model=name, failed=short(e))
                free(args.device)
            row.update(device=device_name, torch=torch.__version__, tiny=args.tiny, seconds=round(time.time() - t0, 1))
            out.write(json.dumps(row) + "\n")
            out.flush()
            say("=== %s done in %.1fs" % (name, time.time() - t0))


if __name__ == "__main__":
    main()
