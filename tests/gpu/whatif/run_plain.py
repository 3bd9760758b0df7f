"""Runs a model's plain variant (or --fixes) as a user script would: a loop
calling the step, no synchronize in it except what the model itself does, one
at the end. What record_models.py records with gpuscope.

Prints one line:
  RUN_PLAIN {"model", "fixes", "steps", "step_ms" (mean of the last half), "seconds"}
The last half is timed from the host's clock at its first step (the host runs
ahead of the GPU by a bounded queue, so over 20+ steps this is the GPU's rate)
to after the final synchronize.
"""

import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, choices=sorted(models.MODELS))
    p.add_argument("--fixes", default="", help="comma list of fix ids (default: none, the plain script)")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--device", default="cuda")
    p.add_argument("--tiny", action="store_true")
    args = p.parse_args()
    t0 = time.time()
    fixes = frozenset(f for f in args.fixes.split(",") if f)
    models.set_defaults()
    torch.manual_seed(0)
    step = models.build(args.model, fixes, args.device, args.tiny)
    half = args.steps // 2
    start = None
    for i in range(args.steps):
        if i == half:
            start = time.perf_counter()
        step()
    if args.device == "cuda":
        torch.cuda.synchronize()
    step_ms = 1000.0 * (time.perf_counter() - start) / (args.steps - half) if start is not None else None
    print("RUN_PLAIN " + json.dumps(dict(model=args.model, fixes=models.key(fixes), steps=args.steps,
                                         step_ms=None if step_ms is None else round(step_ms, 3),
                                         seconds=round(time.time() - t0, 1))), flush=True)


if __name__ == "__main__":
    main()
