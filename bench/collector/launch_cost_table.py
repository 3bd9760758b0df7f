#!/usr/bin/env python3
"""Per process of bench/collector/launch_cost.cu: the median CPU ns per launch of each phase and
what CUPTI's setups add to the plain launch of the same process, for an empty launch and for the
other shapes the result has (wide: a library-shaped launch; varied: 64 distinct kernels in turn;
busy: a launch followed by CPU work reading 512 KB). Each file holds one result (as
the program prints it) or one per line (run_all.sh's launch_cost.jsonl, LC_PROCESSES=N).

  python3 bench/collector/launch_cost_table.py launch_cost.jsonl [launch_cost.json ...]
"""
import json
import os
import sys

PHASES = ("kernels", "runtime", "gpuscope")
# The launch shapes after the empty one, as the program names them; older results lack the last two.
SHAPES = (("ns_per_wide_launch", "wide"), ("ns_per_varied_launch", "varied"), ("ns_per_busy_launch", "busy"))


def rows(paths):
    for path in paths:
        with open(path) as f:
            text = f.read()
        try:
            whole = json.loads(text)
        except json.JSONDecodeError:
            whole = None
        if isinstance(whole, dict):
            yield path, 1, whole
            continue
        for n, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line:
                continue
            try:
                yield path, n, json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: not a launch_cost result: {e}")


def main(paths):
    if not paths:
        sys.exit(__doc__)
    lines = []
    for path, n, r in rows(paths):
        empty = r.get("ns_per_launch", {})
        if "plain" not in empty:
            sys.exit(f"{path}:{n}: no plain phase")
        cells = []
        for p in PHASES:
            e = empty.get(p)
            if e is None:
                cells.append("-")
                continue
            added = ["%+.0f" % (e - empty["plain"])]
            for key, _ in SHAPES:
                shape = r.get(key, {})
                if key != "ns_per_wide_launch" and not shape:
                    continue  # an older result without the shape
                added.append("-" if p not in shape or "plain" not in shape else "%+.0f" % (shape[p] - shape["plain"]))
            cells.append(" / ".join(added))
        lines.append(f"| {os.path.basename(path)}:{n} | {empty['plain']:.0f} | " + " | ".join(cells) + " |")
    print("| process | plain ns | " + " | ".join(f"{p}: added ns (empty / wide[ / varied / busy] launch)" for p in PHASES) + " |")
    print("|---|---:|" + "---:|" * len(PHASES))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
