#!/usr/bin/env python3
"""What tracing costs each kind of step inside one recorded process, from the recording alone.

`gpuscope record`'s default leaves a control stretch untraced (its step time measured on the GPU:
`summary.untraced.step_ms` of `gpuscope analyze`) and, after it, traces kernels in every step but
records torch ops in 2 steps of every 50 (the rest get theirs by position: op external_id >= 2^62).
Steps after the control stretch therefore come in three kinds:

  resume      the first traced step after the control stretch (CUPTI subscribed again after its
              teardown: the kernels are instrumented anew)
  ops         the other steps whose ops were recorded (the op callback on)
  kernels     steps whose ops were placed by position (CUPTI on, the op callback off): the steady
              state of a long job, 48 of every 50 steps

Per recording: the median step of each kind (each step lasts until its GPU work ended) against the
untraced step, and what a long job pays per step on average: kernels-only steps, plus the ops steps'
extra spread over 50 steps (the resume is paid once).

  bench/models/steps_by_kind.py --gpuscope build/bin/gpuscope RUN.db [RUN.db.zst ...] [--json]
"""
import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

PLACED = 1 << 62


def readable(path):
    if not path.endswith(".zst"):
        return path, None
    out = tempfile.NamedTemporaryFile(suffix=".db", delete=False)
    out.close()
    subprocess.run(["zstd", "-q", "-d", "-f", path, "-o", out.name], check=True)
    return out.name, out.name


def untraced_ms(gpuscope, path):
    p = subprocess.run([gpuscope, "analyze", path, "--format", "json"], capture_output=True, text=True)
    if p.returncode != 0:
        return None, None
    s = json.loads(p.stdout).get("summary", {})
    return (s.get("untraced") or {}).get("step_ms"), s.get("pid")


def steps(path, pid):
    """[(number, ms, placed ops, recorded ops, kernels)] of the process, by step number."""
    with sqlite3.connect("file:%s?mode=ro" % path, uri=True) as c:
        return c.execute(
            """select s.number, (s."end" - s.start) / 1e6,
                 (select count(*) from op o where o.pid = s.pid and o.start >= s.start and o.start < s."end" and o.external_id >= ?),
                 (select count(*) from op o where o.pid = s.pid and o.start >= s.start and o.start < s."end"
                    and (o.external_id is null or o.external_id < ?)),
                 (select count(*) from kernel k where k.pid = s.pid and k.start >= s.start and k.start < s."end")
               from step s where s.pid = ? order by s.number""", (PLACED, PLACED, pid)).fetchall()


def kinds(rows):
    """The steps after the control stretch (the last run of steps without kernels), by kind."""
    untraced = [i for i, r in enumerate(rows) if r[4] == 0]
    if not untraced:
        return None
    after = rows[untraced[-1] + 1:]
    out = {"resume": [], "ops": [], "kernels": []}
    for i, (number, ms, placed, recorded, kernels) in enumerate(after):
        if kernels == 0:
            continue
        out["resume" if i == 0 else "ops" if recorded > 0 else "kernels" if placed > 0 else "ops"].append(ms)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpuscope", default="build/bin/gpuscope")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("recordings", nargs="+")
    args = ap.parse_args()
    results = []
    for path in args.recordings:
        db, temp = readable(path)
        try:
            base, pid = untraced_ms(args.gpuscope, db)
            by = kinds(steps(db, pid)) if pid is not None else None
        finally:
            if temp:
                os.unlink(temp)
        name = os.path.basename(path)
        if not base or not by or not by["kernels"]:
            results.append({"recording": name, "why": "no untraced control stretch or no kernels-only steps"})
            continue
        row = {"recording": name, "untraced_ms": round(base, 3)}
        for kind, values in by.items():
            if values:
                row[kind + "_ms"] = round(statistics.median(values), 3)
                row[kind + "_steps"] = len(values)
                row[kind + "_pct"] = round(100 * (statistics.median(values) / base - 1), 1)
        ops_extra = (row.get("ops_ms", row["kernels_ms"]) - row["kernels_ms"]) * 2 / 50
        row["long_job_pct"] = round(100 * ((row["kernels_ms"] + ops_extra) / base - 1), 1)
        results.append(row)
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    print("| recording | untraced | kernels-only steps | ops steps | resume step | long job (48 of 50 kernels-only) |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in results:
        if "why" in r:
            print("| %s | %s | | | | |" % (r["recording"], r["why"]))
            continue
        cell = lambda k: "%.2f ms (%+.1f %%, %d)" % (r[k + "_ms"], r[k + "_pct"], r[k + "_steps"]) if k + "_ms" in r else "-"
        print("| %s | %.2f ms | %s | %s | %s | %+.1f %% |" % (r["recording"], r["untraced_ms"], cell("kernels"), cell("ops"),
                                                           cell("resume"), r["long_job_pct"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
