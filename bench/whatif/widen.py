"""Writes the generic calibration table (the one a GPU without a measured table
gets) from a measured one, every range widened: ratios lo x0.85 and hi x1.2,
costs lo x0.7 and hi x1.5. No table measured on the recording's GPU means its
speed ratios are only known to be of the kind measured on a close one.

Usage: python3 bench/whatif/widen.py analyzer/whatif/calibration/h100.json > analyzer/whatif/calibration/generic.json
"""
import json
import sys

LO, HI = 0.85, 1.2
COST_LO, COST_HI = 0.7, 1.5


def main():
    src = json.load(open(sys.argv[1]))
    out = {
        "schema": src["schema"], "device": "any GPU without a measured table", "match": "", "measured": False,
        "sm_count": 0, "torch": src.get("torch", ""), "cuda": src.get("cuda", ""), "date": src.get("date", ""),
        "command": "python3 bench/whatif/widen.py %s (the %s table, ranges widened)" % (sys.argv[1], src["device"]),
        "peaks": src.get("peaks", {}), "curves": {}, "costs": {}, "errors": {}, "skipped": [],
    }
    for cid, c in src["curves"].items():
        pts = [[p[0], p[1], round(min(p[2], p[1]) * LO, 4), round(max(p[3], p[1]) * HI, 4)] for p in c["points"]]
        out["curves"][cid] = {k: v for k, v in c.items() if k not in ("points", "detail")}
        out["curves"][cid]["points"] = pts
    for cid, c in src["costs"].items():
        v = c["value"]
        out["costs"][cid] = dict(c, lo=round(min(c.get("lo", v), v) * COST_LO, 4), hi=round(max(c.get("hi", v), v) * COST_HI, 4))
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
