"""Runs every setup once per round, alternating the order round by round so that
machine drift hits all setups alike; shows `round N/M` on a terminal.

  results = alternated(["plain", "plugin"], rounds, lambda setup, round_no: ...)
  results["plugin"]  # what run returned, one entry per round
"""
import sys


def alternated(setups, rounds, run):
    results = {s: [] for s in setups}
    for r in range(rounds):
        for setup in setups if r % 2 == 0 else list(reversed(setups)):
            results[setup].append(run(setup, r))
        if sys.stderr.isatty():
            sys.stderr.write("\rround %d/%d" % (r + 1, rounds))
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    return results


def add_common_arguments(ap, steps):
    """The options every alternated-runs benchmark here takes."""
    ap.add_argument("--gpuscope", required=True, help="the gpuscope binary (its lib/ holds the plugin)")
    ap.add_argument("--python", default="/usr/bin/python3", help="python with the torch the plugin was built for")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=steps)
    ap.add_argument("--json", action="store_true", help="print the result as JSON")


def run_worker(setup, cmd, env):
    """Runs one worker process; returns the JSON of its `RESULT {...}` line, or exits naming the setup."""
    import json
    import subprocess
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if out.returncode != 0:
        sys.exit("%s run failed:\n%s%s" % (setup, out.stdout, out.stderr))
    return json.loads(next(l[7:] for l in out.stdout.splitlines() if l.startswith("RESULT ")))


def remove_recording(db):
    import os
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)


def vs_plain(runs, setup, key):
    """Per-round ratio of `key` against the plain run of the same round: median, min and max in %."""
    import statistics
    per_round = [a[key] / b[key] - 1 for a, b in zip(runs[setup], runs["plain"])]
    return {"median_pct": round(100 * statistics.median(per_round), 1),
            "min_pct": round(100 * min(per_round), 1), "max_pct": round(100 * max(per_round), 1)}
