"""`gpuscope try` checked on real models on the GPU machine (issue 48, docs/try.md).

For each model (tests/gpu/whatif/models.py: timm, transformers and torchvision
models written as users write them, random weights and data):
  1. `gpuscope record` of the plain script (tests/gpu/whatif/run_plain.py);
  2. `gpuscope try --from` that recording with --variants variants x --rounds
     rounds x --steps steps, the job being run_plain.py running until stopped;
  3. the same variants timed by hand in one process, alternated (the fixes
     applied in code by models.build, blocks of steps, one synchronize per block);
  4. the plain script run (V+1) x R times without gpuscope, each for as many
     steps as try's runs took, for the wall-time comparison.
Writes $OUT/try_check.json and $OUT/try_check.md (a table per model: measured by
try, by hand, the difference in points, predicted; and the wall time of the
whole try against the plain runs), rewritten after every model, so a call cut
short keeps what was done.

Usage (device machine, archive unpacked as tests/gpu/README.md says):
  python3 tests/gpu/try_check.py --gpuscope .carry/bin/gpuscope --budget 480 > $OUT/try_log.txt 2>&1
  python3 tests/gpu/try_check.py --models t5_small,resnet50_gn ...   # the models a first call did not reach
Models start only while the budget allows one more (each takes 60-150 s); the
six default ones take about two calls.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WHATIF = os.path.join(HERE, "whatif")
sys.path.insert(0, WHATIF)

# Model -> the variants tried (the hook's fix ids); 4 each, cheap ones first.
DEFAULT_MODELS = {
    "resnet50": ["amp", "channels-last", "amp+channels-last", "fused-optimizer"],
    "vit_b16": ["amp", "fused-optimizer", "amp+fused-optimizer", "compile"],
    "bert": ["amp", "fused-optimizer", "amp+fused-optimizer", "compile"],
    "convnext_tiny": ["amp", "channels-last", "amp+channels-last", "fused-optimizer"],
    "t5_small": ["amp", "fused-optimizer", "amp+fused-optimizer", "compile"],
    "resnet50_gn": ["amp", "channels-last", "amp+channels-last", "fused-optimizer"],
}


def log(msg):
    sys.stderr.write("[try_check %s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def record(args, model, out):
    db = os.path.join(out, model + ".db")
    cmd = [args.gpuscope, "record", "--force", "-o", db, "--", args.python, os.path.join(WHATIF, "run_plain.py"),
           "--model", model, "--steps", "40"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if done.returncode != 0:
        raise RuntimeError("record failed: " + (done.stderr.strip().splitlines() or ["?"])[-1])
    return db


def run_try(args, model, variants, db, out):
    report = os.path.join(out, model + "_try.json")
    cmd = [args.gpuscope, "try", "--from", db, "--fixes", ",".join(variants), "--steps", str(args.steps),
           "--rounds", str(args.rounds), "--warmup-max", "40", "--grace", "5", "--timeout", "240", "--format",
           "json", "-o", report, "--force", "--no-history", "--", args.python, os.path.join(WHATIF, "run_plain.py"),
           "--model", model, "--steps", "1000000"]
    t0 = time.time()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    wall = time.time() - t0
    with open(os.path.join(out, model + "_try.log"), "w") as f:
        f.write(done.stderr)
    if done.returncode != 0:
        raise RuntimeError("try exited %d: %s" % (done.returncode, (done.stderr.strip().splitlines() or ["?"])[-1]))
    return json.load(open(report)), wall


def time_by_hand(args, model, variants):
    """The variants built in this process by models.build (fixes in code), warmed
    up, then timed alternately in blocks; step_ms: the median of block means."""
    import torch
    import models

    models.set_defaults()
    steps = {}
    errors = {}
    for v in [""] + variants:
        fixes = frozenset(f for f in v.split("+") if f)
        try:
            torch.manual_seed(0)
            step = models.build(model, fixes, "cuda", False)
            for _ in range(args.hand_warmup):
                step()
            torch.cuda.synchronize()
            steps[v] = step
        except Exception as e:  # a variant that fails is reported, the rest go on
            errors[v] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
    blocks = {v: [] for v in steps}
    for _ in range(args.hand_blocks):
        for v, step in steps.items():
            torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(args.hand_steps):
                step()
            torch.cuda.synchronize()
            blocks[v].append(1000.0 * (time.perf_counter() - t) / args.hand_steps)
    ms = {v: statistics.median(b) for v, b in blocks.items() if b}
    del steps
    torch.cuda.empty_cache()
    return ms, errors


def plain_runs(args, model, n_runs, steps_each):
    """The plain script without gpuscope, n_runs times, each for `steps_each` steps: the wall
    time the same work takes without try."""
    t0 = time.time()
    for _ in range(n_runs):
        subprocess.run([args.python, os.path.join(WHATIF, "run_plain.py"), "--model", model, "--steps",
                        str(steps_each)], capture_output=True, text=True, timeout=600)
    return time.time() - t0


def markdown(results):
    lines = ["# gpuscope try against fixes timed by hand (%s)" % time.strftime("%Y-%m-%d"), ""]
    for r in results:
        lines.append("## %s" % r["model"])
        if r.get("error"):
            lines += ["", "error: %s" % r["error"], ""]
            continue
        lines += ["", "| variant | try: saving % (rounds) | by hand: saving % | difference, points | within 3 points | "
                  "predicted % | try says |", "|---|---|---|---|---|---|---|"]
        for v in r["variants"]:
            lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                v["variant"], v["try_saving"], v["hand_saving"], v["difference"], v["within_3_points"],
                v["predicted"], v["try_state"]))
        lines += ["", "whole try: %.1f s; the same runs without gpuscope: %.1f s (%+.1f %%)" % (
            r["try_wall_s"], r["plain_wall_s"], r["wall_overhead_pct"]), ""]
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gpuscope", default=".carry/bin/gpuscope")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--models", default=",".join(DEFAULT_MODELS), help="comma list (default: %(default)s)")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--hand-steps", type=int, default=10)
    p.add_argument("--hand-blocks", type=int, default=5)
    p.add_argument("--hand-warmup", type=int, default=8)
    p.add_argument("--budget", type=float, default=480, help="seconds; no model starts after 75 %% of it")
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    p.add_argument("--no-plain", action="store_true", help="skip the plain runs (wall-time comparison)")
    args = p.parse_args()
    start = time.time()
    os.makedirs(args.out, exist_ok=True)
    results = []
    for model in [m for m in args.models.split(",") if m]:
        if time.time() - start > 0.75 * args.budget:
            results.append(dict(model=model, error="skipped: budget (run it in another call with --models %s)" % model))
            continue
        variants = DEFAULT_MODELS.get(model, ["amp", "fused-optimizer", "channels-last", "compile"])
        r = dict(model=model)
        try:
            log("%s: record" % model)
            db = record(args, model, args.out)
            log("%s: try %s" % (model, ",".join(variants)))
            doc, wall = run_try(args, model, variants, db, args.out)
            log("%s: by hand" % model)
            hand, hand_errors = time_by_hand(args, model, variants)
            runs = doc["runs_done"]
            steps_each = args.steps + 20  # steady steps plus a typical warm-up
            plain = 0.0 if args.no_plain else plain_runs(args, model, runs, steps_each)
            r.update(try_wall_s=round(wall, 1), plain_wall_s=round(plain, 1),
                     wall_overhead_pct=round(100.0 * (wall / plain - 1), 1) if plain else 0.0,
                     baseline_ms=doc["baseline"]["step_ms"], hand_plain_ms=hand.get(""), hand_errors=hand_errors,
                     variants=[])
            for v in doc["variants"]:
                name = v["variant"]
                hs = (100.0 * (1 - hand[name] / hand[""])) if name in hand and "" in hand else None
                ts = v["saving_pct"]
                diff = None if hs is None or ts is None else round(ts - hs, 1)
                pred = v["predicted"]["saving_pct"] if v["predicted"] else None
                r["variants"].append(dict(
                    variant=name, try_state=v["state"] if v["state"] != "measured" else "measured",
                    try_why=v["why"], try_applied=v["applied"],
                    try_saving=None if ts is None else "%+.1f (%+.1f..%+.1f)" % (ts, *v["saving_range_pct"]),
                    try_saving_pct=ts, hand_saving=None if hs is None else "%+.1f" % hs, hand_saving_pct=hs,
                    difference=diff, within_3_points=None if diff is None else abs(diff) <= 3,
                    predicted=pred, within_predicted_range=v["within_range"]))
        except Exception as e:
            r["error"] = "%s: %s" % (type(e).__name__, e)
            log("%s: %s" % (model, r["error"]))
        results.append(r)
        with open(os.path.join(args.out, "try_check.json"), "w") as f:
            json.dump(dict(date=time.strftime("%Y-%m-%d"), steps=args.steps, rounds=args.rounds, results=results), f,
                      indent=1)
        with open(os.path.join(args.out, "try_check.md"), "w") as f:
            f.write(markdown(results))
        log("%s: done at %.0f s" % (model, time.time() - start))
    print(markdown(results))


if __name__ == "__main__":
    main()
