#!/usr/bin/env python3
"""Overhead of gpuscope against no profiler and torch.profiler, on the
compute-bound and launch-bound samples. Runs are alternated (plain, gpuscope,
torch.profiler, plain, ...; each round starts one run later in that order) and the
result is the median of per-round ratios of median step times, as launch-bound
timings drift ±15 % between runs; `round_overhead_pct` keeps each round's ratio.
Each --variant NAME=OPTIONS is one more gpuscope configuration in every round
(default: `gpuscope` with the default sources, `gpuscope_no_torch` with
--trace cuda,nvtx, so the torch plugin's own cost is the difference). OPTIONS
starting with `!` run the script without gpuscope, with the KEY=VALUE words as
environment (e.g. a bare CUPTI injection through CUDA_INJECTION64_PATH).
`overhead_pct` compares median step times (`overhead_ci95_pct`: a bootstrap interval over rounds), `overhead_mean_pct` mean step
times (they differ when only some steps are traced: GPUSCOPE_SAMPLE_MS).
Usage: bench/overhead.py --gpuscope PATH [--rounds N] [--variant NAME=OPTS ...]
                         [--loops compute_bound,launch_bound] [--no-torch-profiler] [--cpus 2-7]
                         [--fixed-layout] [--placement] [--calibrate] [--no-thp]
                         [--out results.json]"""
import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import resource
from collections import Counter

ap = argparse.ArgumentParser()
ap.add_argument("--gpuscope", required=True)
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--python", default=sys.executable)
ap.add_argument("--out")
ap.add_argument("--loops", default="compute_bound,launch_bound")
ap.add_argument("--launch-steps", type=int, default=300, help="steps of the launch-bound loop")
ap.add_argument("--no-torch-profiler", action="store_true", help="leave torch.profiler's runs out (saves time)")
ap.add_argument("--variant", action="append", default=[],
                help="NAME=gpuscope record options and KEY=VALUE environment words, e.g. "
                     "'with_memory=--trace cuda,nvtx,torch,memory' or 'no_driver=GPUSCOPE_DRIVER_API=0'")
ap.add_argument("--cpus", help="run every job under `taskset -c CPUS` (e.g. 2-7), so that runs do not "
                                "differ in where the scheduler put them")
ap.add_argument("--fixed-layout", action="store_true",
                help="the same memory layout in every run: address randomization off (setarch -R, where the "
                     "machine allows it) and PYTHONHASHSEED=0, so runs differ less in cache behaviour. Each "
                     "variant then keeps one layout, set partly by its environment (LD_PRELOAD, GPUSCOPE_*): "
                     "a bias between variants that A/A runs do not show")
ap.add_argument("--placement", action="store_true",
                help="watch where each run's threads ran (/proc, every 50 ms) and its context switches; "
                     "stored per run as `placement`, to find what makes one process slower than another")
ap.add_argument("--calibrate", action="store_true",
                help="each run also times a fixed piece of plain Python (GPUSCOPE_CALIBRATE=1, sample_common.py); "
                     "`overhead_calibrated_pct` divides each run's median step by it, to take out how fast that "
                     "process happened to run")
ap.add_argument("--no-thp", action="store_true",
                help="run every job with transparent huge pages off (prctl PR_SET_THP_DISABLE), so runs do not "
                     "differ in which memory the kernel backed with huge pages")
args = ap.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
samples = os.path.join(here, "..", "samples", "torch")
all_loops = {"compute_bound": ["--steps", "40"], "launch_bound": ["--steps", str(args.launch_steps)]}
loops = {name: all_loops[name] for name in args.loops.split(",")}
tmp = tempfile.mkdtemp(prefix="gpuscope_overhead_")


def layout_prefix():
    if not args.fixed_layout:
        return [], {}
    fixed = ["setarch", os.uname().machine, "-R"]
    try:
        works = subprocess.run(fixed + ["true"], capture_output=True).returncode == 0
    except OSError:
        works = False
    if not works:
        print("overhead.py: setarch -R does not work here; only PYTHONHASHSEED is fixed", file=sys.stderr)
    return (fixed if works else []), {"PYTHONHASHSEED": "0"}


layout_cmd, layout_env = layout_prefix()
if args.no_thp:
    # PR_SET_THP_DISABLE (41) is inherited across fork and exec.
    layout_cmd = [sys.executable, "-c", "import ctypes, os, sys; ctypes.CDLL(None).prctl(41, 1, 0, 0, 0); "
                  "os.execvp(sys.argv[1], sys.argv[1:])"] + layout_cmd
if args.calibrate:
    layout_env["GPUSCOPE_CALIBRATE"] = "1"
calibrations = {}


def smt_siblings():
    """cpu -> the set of CPUs sharing its core (itself included)."""
    out = {}
    base = "/sys/devices/system/cpu"
    for name in os.listdir(base):
        if not re.fullmatch(r"cpu\d+", name):
            continue
        try:
            text = open(f"{base}/{name}/topology/thread_siblings_list").read().strip()
        except OSError:
            continue
        cpus = set()
        for part in text.split(","):
            lo, _, hi = part.partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
        out[int(name[3:])] = cpus
    return out


def tree_threads(pid):
    """(pid, tid, comm, state, cpu) of every thread of pid and its descendants."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                stat = open(f"/proc/{p}/task/{tid}/stat").read()
                kids = open(f"/proc/{p}/task/{tid}/children").read().split()
            except OSError:
                continue
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
            rest = stat[stat.rindex(")") + 2:].split()
            found.append((p, int(tid), comm, rest[0], int(rest[36])))
            todo += [int(k) for k in kids]
    return found


def watched_run(cmd, env):
    """Runs cmd, sampling its threads every 50 ms; returns (stdout, stderr, rc, placement)."""
    siblings = smt_siblings()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    samples, stop = [], threading.Event()

    def watch():
        while not stop.wait(0.05):
            samples.append([t for t in tree_threads(proc.pid) if t[3] == "R"])
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        out, err = proc.communicate(timeout=300)
    finally:
        stop.set()
        watcher.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy = Counter()
    cpus = {}
    moves = Counter()
    last = {}
    smt = same = 0
    for running in samples:
        for p, tid, comm, _, cpu in running:
            key = f"{comm}:{tid}"
            busy[key] += 1
            cpus.setdefault(key, Counter())[cpu] += 1
            moves[key] += key in last and last[key] != cpu
            last[key] = cpu
        on = [t[4] for t in running]
        same += len(on) != len(set(on))
        smt += any(b in siblings.get(a, ()) and a != b for i, a in enumerate(on) for b in on[i + 1:])
    n = max(len(samples), 1)
    placement = {
        "samples": len(samples),
        # the busiest threads: share of samples running, CPUs used, CPU changes between samples
        "threads": {k: {"running": round(c / n, 3), "cpus": dict(cpus[k].most_common(4)), "moves": moves[k]}
                    for k, c in busy.most_common(4)},
        "two_running_on_smt_siblings": round(smt / n, 3),
        "two_running_on_one_cpu": round(same / n, 3),
        "user_s": round(after.ru_utime - before.ru_utime, 2),
        "sys_s": round(after.ru_stime - before.ru_stime, 2),
        "voluntary_switches": after.ru_nvcsw - before.ru_nvcsw,
        "involuntary_switches": after.ru_nivcsw - before.ru_nivcsw,
    }
    return out, err, proc.returncode, placement


placements = {}


def median_step(cmd, env=None, name=None):
    cmd = layout_cmd + cmd
    if args.cpus:
        cmd = ["taskset", "-c", args.cpus] + cmd
    full_env = dict(os.environ, **layout_env, **(env or {}))
    if args.placement:
        stdout, stderr, rc, where = watched_run(cmd, full_env)
        placements.setdefault(name, []).append(where)
        r = subprocess.CompletedProcess(cmd, rc, stdout, stderr)
    else:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=full_env)
    for line in r.stdout.splitlines():
        if line.startswith("GPUSCOPE_SAMPLE "):
            result = json.loads(line[len("GPUSCOPE_SAMPLE "):])
            if args.calibrate:
                calibrations.setdefault(name, []).append(result["calibration_ms"])
            return result["median_step_ms"], 1000.0 * result["total_measured_s"] / result["steps"]
    raise RuntimeError(f"no result from {cmd}: rc {r.returncode}\n{r.stderr[-2000:]}")


variants = dict(v.split("=", 1) for v in args.variant) or {"gpuscope": "", "gpuscope_no_torch": "--trace cuda,nvtx"}
results = {}
for loop, loop_args in loops.items():
    script = [args.python, os.path.join(samples, loop + ".py")] + loop_args
    runs = {"plain": [], **{name: [] for name in variants}}
    means = {name: [] for name in runs}
    if not args.no_torch_profiler:
        runs["torch.profiler"] = []
    def command(name, i):
        if name == "plain":
            return script, None
        if name == "torch.profiler":
            return script + ["--profile", os.path.join(tmp, f"{loop}_{i}.json")], None
        opts = variants[name]
        db = os.path.join(tmp, f"{loop}_{name}_{i}.db")
        words = opts.lstrip("!").split()
        # KEY=VALUE words are the collector's environment (e.g. GPUSCOPE_DRIVER_API=0), the rest record options.
        env = dict(w.split("=", 1) for w in words if re.match(r"^[A-Z][A-Z0-9_]*=", w))
        rec = [w for w in words if not re.match(r"^[A-Z][A-Z0-9_]*=", w)]
        if opts.startswith("!"):
            return script, env
        return [args.gpuscope, "record", "--force", "-o", db] + rec + ["--"] + script, env

    ratio = lambda name, of: statistics.median(r / p for r, p in zip(of[name], of["plain"]))

    def ci95(name, of):
        # Bootstrap over rounds (fixed seed): how far the median of the pair
        # ratios could move with other rounds, as the loop moves ±20 % per run.
        pairs = [r / p for r, p in zip(of[name], of["plain"])]
        rng = random.Random(1)
        meds = sorted(statistics.median(rng.choices(pairs, k=len(pairs))) for _ in range(2000))
        return [round(100 * (meds[50] - 1), 1), round(100 * (meds[1949] - 1), 1)]
    order = list(runs)
    for i in range(args.rounds):
        # Each round starts one run later in the order, so no variant always runs
        # first (or right after the same neighbour) while the machine drifts.
        for name in order[i % len(order):] + order[:i % len(order)]:
            cmd, env = command(name, i)
            median, mean = median_step(cmd, env, f"{loop}:{name}")
            runs[name].append(median)
            means[name].append(mean)
        print(loop, i, "median", {k: v[-1] for k, v in runs.items()}, "mean",
              {k: round(v[-1], 3) for k, v in means.items()}, flush=True)
        results[loop] = {
            "rounds": i + 1,
            "layout": ("fixed (setarch -R, PYTHONHASHSEED=0)" if layout_cmd else "PYTHONHASHSEED=0")
            if args.fixed_layout else "random",
            "median_step_ms": {k: statistics.median(v) for k, v in runs.items()},
            "overhead_pct": {name: round(100 * (ratio(name, runs) - 1), 2) for name in runs if name != "plain"},
            "overhead_mean_pct": {name: round(100 * (ratio(name, means) - 1), 2) for name in runs if name != "plain"},
            "overhead_ci95_pct": {name: ci95(name, runs) for name in runs if name != "plain"},
            # Per round, to show the spread the median hides.
            "round_overhead_pct": {name: [round(100 * (r / p - 1), 1) for r, p in zip(runs[name], runs["plain"])]
                                   for name in runs if name != "plain"},
            "runs": runs,
            "mean_step_ms_runs": means,
        }
        if args.calibrate:
            # Step time in units of the process's own speed at plain Python.
            cal = {k: calibrations[f"{loop}:{k}"] for k in runs}
            scaled = {k: [m / c for m, c in zip(runs[k], cal[k])] for k in runs}
            results[loop]["calibration_ms"] = cal
            results[loop]["overhead_calibrated_pct"] = {name: round(100 * (ratio(name, scaled) - 1), 2)
                                                        for name in runs if name != "plain"}
            results[loop]["overhead_calibrated_ci95_pct"] = {name: ci95(name, scaled) for name in runs if name != "plain"}
            results[loop]["round_overhead_calibrated_pct"] = {
                name: [round(100 * (r / p - 1), 1) for r, p in zip(scaled[name], scaled["plain"])]
                for name in runs if name != "plain"}
        if args.placement:
            results[loop]["placement"] = {name.split(":", 1)[1]: where for name, where in placements.items()
                                          if name.startswith(loop + ":")}
        if args.out:  # after each round, so a run cut short still leaves its results
            json.dump(results, open(args.out, "w"), indent=1)
    print(loop, "median", json.dumps(results[loop]["overhead_pct"]), flush=True)
    print(loop, "median 95 % interval", json.dumps(results[loop]["overhead_ci95_pct"]), flush=True)
    print(loop, "per round", json.dumps(results[loop]["round_overhead_pct"]), flush=True)
    print(loop, "mean", json.dumps(results[loop]["overhead_mean_pct"]), flush=True)
    if args.calibrate:
        print(loop, "calibrated median", json.dumps(results[loop]["overhead_calibrated_pct"]), flush=True)
        print(loop, "calibrated 95 % interval", json.dumps(results[loop]["overhead_calibrated_ci95_pct"]), flush=True)
        print(loop, "calibrated per round", json.dumps(results[loop]["round_overhead_calibrated_pct"]), flush=True)
print(json.dumps(results, indent=1))
if args.out:
    json.dump(results, open(args.out, "w"), indent=1)
