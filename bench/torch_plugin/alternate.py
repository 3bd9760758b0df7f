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
