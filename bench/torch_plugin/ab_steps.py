#!/usr/bin/env python3
"""What recording ops costs a training loop, measured inside one process.

Between processes, the launch-bound loop's median step moves by 20-40 % on the
GPU machine (a KVM guest; docs/PERFORMANCE.md), which hides a cost of a few
points however many runs are alternated. Here every run is one `gpuscope
record` of the script under ab_shim.py --block N: the torch plugin records ops
for N steps, then not for the next N, and so on, with everything else unchanged
(CUPTI, steps, ranges, the collector). Steps with op rows are the "on" ones.
Adjacent blocks are compared, so drift within the run cancels too.

Reported per run:
  traced steps   on / off: median and mean step (ms), ops per "on" step, and the plugin's cost:
                 median over adjacent block pairs of median(on) / median(off) - 1
                 (`pair_pct`), and mean(on) / mean(off) - 1 (`mean_pct`)
  sampled runs   (--sample ON,OFF) the same within traced stretches, the
                 untraced steps' median and mean, and what the plugin adds to
                 the run's mean step when every traced step records ops
                 (`sampled_mean_pct`: traced share x (mean(on) - mean(off)) /
                 mean step without ops); the run's median step is an untraced
                 one, which the plugin leaves alone (its op callback is off there)

With --plain, each run also times the script without gpuscope, and the cost is
given in points of that plain step (`pp_of_plain`: (mean(on) - mean(off)) /
plain; `sampled_pp_of_plain`: the same times the traced share), the unit of the
overhead targets ("at most 3 points more than without the plugin").
With --idle, the "off" blocks keep the op callback registered and returning at
once: on/off is then the plugin's own work, apart from torch's cost of calling it.

Not included, because both kinds of step share them: torch's cost for the
plugin's range callback (a few ranges a step) and the step boundary itself;
and the collector decoding op rows on its own thread.

  python3 bench/torch_plugin/ab_steps.py --gpuscope build/bin/gpuscope --python /usr/bin/python3 \\
      --device cpu --steps 300 --runs 3
  python3 bench/torch_plugin/ab_steps.py --gpuscope ... --device cuda --steps 600 --sample 0.3,2.7 --block 8
"""
import argparse
import bisect
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--gpuscope", required=True, help="the gpuscope binary")
ap.add_argument("--python", default=sys.executable, help="the python whose torch the plugin is built for")
ap.add_argument("--script", default=os.path.join(HERE, "..", "..", "samples", "torch", "launch_bound.py"),
                help="a sample from samples/torch (default: launch_bound.py)")
ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
ap.add_argument("--steps", type=int, default=300)
ap.add_argument("--block", type=int, default=10, help="steps per block (ab_shim.py --block)")
ap.add_argument("--runs", type=int, default=1, help="processes, one after the other")
ap.add_argument("--sample", help="ON,OFF seconds: gpuscope record --sample")
ap.add_argument("--cpus", help="run under `taskset -c CPUS`")
ap.add_argument("--plain", action="store_true",
                help="before each recording, run the script without gpuscope: the cost is then also given in "
                     "points of that plain step (`pp_of_plain`, `sampled_pp_of_plain`), the unit of the overhead "
                     "targets; that denominator comes from another process, so it carries the usual spread")
ap.add_argument("--idle", action="store_true",
                help="ab_shim.py --idle: the blocks without ops keep the op callback registered, returning "
                     "at once, so on/off is the plugin's own work and torch's cost of calling it is left out")
ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="more environment for the job")
ap.add_argument("--json", metavar="OUT.json", help="also write the results here")
ap.add_argument("--force", action="store_true", help="overwrite --json's file")
args = ap.parse_args()

if args.block < 1 or args.steps < 4 * args.block:
    sys.exit("ab_steps.py: --steps must hold at least 4 blocks of --block steps")
if not os.path.isfile(args.script):
    sys.exit(f"ab_steps.py: {args.script}: no such sample")
if args.json and os.path.exists(args.json) and not args.force:
    sys.exit(f"ab_steps.py: {args.json} exists; pass --force to overwrite it")
extra_env = {}
for item in args.env:
    name, eq, value = item.partition("=")
    if not eq or not name:
        sys.exit(f"ab_steps.py: --env {item}: expected NAME=VALUE")
    extra_env[name] = value


def run(cmd, env, what, need_result):
    """Runs cmd (under taskset with --cpus); returns the sample's GPUSCOPE_SAMPLE result ({} if none)."""
    if args.cpus:
        cmd = ["taskset", "-c", args.cpus] + cmd
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    line = [l for l in done.stdout.splitlines() if l.startswith("GPUSCOPE_SAMPLE ")]
    if done.returncode != 0 or (need_result and not line):
        sys.stderr.write(done.stdout[-2000:] + done.stderr[-2000:])
        sys.exit(f"ab_steps.py: {what} of {args.script} exited {done.returncode}")
    return json.loads(line[-1][len("GPUSCOPE_SAMPLE "):]) if line else {}


def plain_run():
    cmd = [args.python, args.script, "--device", args.device, "--steps", str(min(args.steps, 400))]
    return run(cmd, dict(os.environ, **extra_env), "the plain run", True)["median_step_ms"]


def record(db):
    cmd = [args.gpuscope, "record", "-o", db]
    if args.sample:
        cmd += ["--sample", args.sample]
    cmd += ["--", args.python, os.path.join(HERE, "ab_shim.py"), "--block", str(args.block)]
    if args.idle:
        cmd.append("--idle")
    cmd += [args.script, "--device", args.device, "--steps", str(args.steps)]
    return run(cmd, dict(os.environ, **extra_env), "`gpuscope record`", False)


def ms(values):
    return round(statistics.median(values) / 1e6, 4) if values else None


def mean_ms(values):
    return round(statistics.fmean(values) / 1e6, 4) if values else None


def analyze(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    steps = con.execute('SELECT number, start, "end" FROM step ORDER BY start').fetchall()
    op_starts = [s for (s,) in con.execute("SELECT start FROM op ORDER BY start")]
    windows = con.execute('SELECT start, "end" FROM range WHERE source = 7 ORDER BY start').fetchall()
    con.close()
    if len(steps) < 4 * args.block:
        sys.exit(f"ab_steps.py: {db}: {len(steps)} steps recorded, expected about {args.steps}")

    window_starts = [w[0] for w in windows]

    def window_of(start, end):
        if not windows:
            return 0
        i = bisect.bisect_right(window_starts, start) - 1
        return i if i >= 0 and end <= windows[i][1] else None

    # (duration, on, window index or None when untraced), from the third block on: the first
    # steps include warm-up and the plugin's late start.
    rows = []
    op_counts = []
    for number, start, end in steps[2 * args.block:]:
        count = bisect.bisect_left(op_starts, end) - bisect.bisect_left(op_starts, start)
        rows.append((end - start, count > 0, window_of(start, end)))
        if count:
            op_counts.append(count)
    traced = [r for r in rows if r[2] is not None]
    on = [r[0] for r in traced if r[1]]
    off = [r[0] for r in traced if not r[1]]
    untraced = [r[0] for r in rows if r[2] is None]
    # Adjacent blocks in one stretch: runs of equal (on, window).
    blocks = []
    for duration, has_ops, window in traced:
        if blocks and blocks[-1][0] == (has_ops, window):
            blocks[-1][1].append(duration)
        else:
            blocks.append(((has_ops, window), [duration]))
    pairs = []
    for (ka, a), (kb, b) in zip(blocks, blocks[1:]):
        if ka[1] == kb[1] and ka[0] != kb[0] and min(len(a), len(b)) >= max(2, args.block // 2):
            on_block, off_block = (a, b) if ka[0] else (b, a)
            pairs.append(statistics.median(on_block) / statistics.median(off_block))
    out = {
        "steps_used": len(rows), "traced_on": len(on), "traced_off": len(off), "untraced": len(untraced),
        "median_on_ms": ms(on), "median_off_ms": ms(off), "mean_on_ms": mean_ms(on), "mean_off_ms": mean_ms(off),
        "ops_per_on_step": statistics.median(op_counts) if op_counts else 0,
        "block_pairs": len(pairs),
        "pair_pct": round(100 * (statistics.median(pairs) - 1), 2) if pairs else None,
        "mean_pct": round(100 * (statistics.fmean(on) / statistics.fmean(off) - 1), 2) if on and off else None,
    }
    if windows:
        out["median_untraced_ms"], out["mean_untraced_ms"] = ms(untraced), mean_ms(untraced)
        if on and off and rows:
            share = len(traced) / len(rows)
            without = (sum(untraced) + len(traced) * statistics.fmean(off)) / len(rows)
            out["traced_share"] = round(share, 4)
            out["sampled_mean_pct"] = round(100 * share * (statistics.fmean(on) - statistics.fmean(off)) / without, 2)
    if not on or not off:
        out["problem"] = "no traced steps with ops" if not on else "no traced steps without ops"
    return out


results = []
with tempfile.TemporaryDirectory(prefix="gpuscope_ab_") as tmp:
    for i in range(args.runs):
        db = os.path.join(tmp, f"run{i}.db")
        plain_ms = plain_run() if args.plain else None
        sample = record(db)
        result = analyze(db)
        result["sample_median_step_ms"] = sample.get("median_step_ms")
        if plain_ms and result["mean_on_ms"] and result["mean_off_ms"]:
            result["plain_median_ms"] = plain_ms
            extra = result["mean_on_ms"] - result["mean_off_ms"]
            result["pp_of_plain"] = round(100 * extra / plain_ms, 2)
            if "traced_share" in result:
                result["sampled_pp_of_plain"] = round(100 * result["traced_share"] * extra / plain_ms, 2)
        results.append(result)
        print(f"run {i + 1}/{args.runs}", json.dumps(result), flush=True)

summary = {"script": os.path.basename(args.script), "device": args.device, "steps": args.steps, "block": args.block,
           "sample": args.sample, "idle": args.idle, "env": extra_env, "runs": results}
for key in ("pair_pct", "mean_pct", "sampled_mean_pct", "pp_of_plain", "sampled_pp_of_plain"):
    values = [r[key] for r in results if r.get(key) is not None]
    if values:
        summary[key + "_median_over_runs"] = round(statistics.median(values), 2)
print("summary", json.dumps({k: v for k, v in summary.items() if k != "runs"}), flush=True)
if args.json:
    partial = args.json + ".part"
    with open(partial, "w") as f:
        json.dump(summary, f, indent=1)
    os.replace(partial, args.json)
bad = [r["problem"] for r in results if "problem" in r]
if bad:
    sys.exit("ab_steps.py: " + "; ".join(sorted(set(bad))))
