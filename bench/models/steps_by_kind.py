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

With --calls, a second table: in the kernels-only steps, the launch calls a step makes (runtime
and driver API calls with "Launch" in their name), their median and mean duration (the call as CUPTI
timed it: CUDA's own work plus what CUPTI adds inside the call), the time a step spends in CUDA
calls on all its threads, and what the kernels-only step costs more than the untraced one. An
empty launch costs a plain process 3.7-4.1 us (bench/collector/launch_cost.cu on the H200), so a
longer call is what CUPTI adds in it; where the step grew by more than all its calls take, the
rest of tracing's cost is outside the CUDA calls (torch, Python, the caches).

With --resume, a third table: what the first resume after the control stretch cost the job. The
resume step's CPU span holds the drain (the job's thread waits until the GPU has run the untraced
steps' queued work: the CPU's lead given up, the GPU busy meanwhile); after the drain the GPU has
nothing to run until the first traced kernel: CUPTI subscribing and enabling again, then the step's
own code up to its first launch. Recordings made since 2026-12-05 also hold gpuscope's own
`tracer_overhead` ranges for those phases ("gpuscope: CUPTI resume, ..."), summed here.

  bench/models/steps_by_kind.py --gpuscope build/bin/gpuscope RUN.db [RUN.db.zst ...] [--json] [--calls] [--resume]
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
    """[(number, ms, placed ops, recorded ops, kernels, start, end)] of the process, by step number."""
    with sqlite3.connect("file:%s?mode=ro" % path, uri=True) as c:
        return c.execute(
            """select s.number, (s."end" - s.start) / 1e6,
                 (select count(*) from op o where o.pid = s.pid and o.start >= s.start and o.start < s."end" and o.external_id >= ?),
                 (select count(*) from op o where o.pid = s.pid and o.start >= s.start and o.start < s."end"
                    and (o.external_id is null or o.external_id < ?)),
                 (select count(*) from kernel k where k.pid = s.pid and k.start >= s.start and k.start < s."end"),
                 s.start, s."end"
               from step s where s.pid = ? order by s.number""", (PLACED, PLACED, pid)).fetchall()


def launch_calls(path, pid, spans):
    """Over the steps `spans` [(start, end)]: launch calls per step, their median and mean
    duration in us, and the median step's time in CUDA API calls on all threads in ms."""
    durations, in_calls = [], []
    with sqlite3.connect("file:%s?mode=ro" % path, uri=True) as c:
        for start, end in spans:
            rows = c.execute(
                """select a.tid, a.start, a."end", s.value like '%Launch%' from api_call a join string s on s.id = a.name_id
                   where a.pid = ? and a.start >= ? and a.start < ?""", (pid, start, end)).fetchall()
            durations += [(e - b) / 1e3 for _, b, e, launch in rows if launch]
            in_calls.append(sum(min(e, end) - b for _, b, e, _ in rows) / 1e6)
    if not durations:
        return None
    return {"launches_per_step": round(len(durations) / len(spans), 1),
            "launch_call_us_median": round(statistics.median(durations), 2),
            "launch_call_us_mean": round(statistics.mean(durations), 2),
            "cuda_calls_ms": round(statistics.median(in_calls), 3)}


def resume(path, pid):
    """The first resume after an untraced stretch measured on the GPU: its step's CPU span, how far
    into it the drain ended, the GPU idle from there to the first kernel, and gpuscope's own
    overhead ranges in that idle, in ms; None without such a stretch."""
    with sqlite3.connect("file:%s?mode=ro" % path, uri=True) as c:
        row = c.execute("SELECT min(\"end\") FROM range WHERE source = 8 AND pid = ?", (pid,)).fetchone()
        if not row or row[0] is None:
            return None
        drained = row[0]
        step = c.execute("SELECT start, \"end\" FROM step WHERE pid = ? AND start <= ? AND \"end\" > ? "
                         "ORDER BY start LIMIT 1", (pid, drained, drained)).fetchone()
        first = c.execute("SELECT min(start) FROM kernel WHERE pid = ? AND start > ?", (pid, drained)).fetchone()[0]
        if not step or first is None:
            return None
        own = c.execute("SELECT sum(r.\"end\" - r.start) FROM range r JOIN string s ON s.id = r.name_id "
                        "WHERE r.pid = ? AND r.source = 9 AND s.value LIKE 'gpuscope: CUPTI resume%' "
                        "AND r.start >= ? AND r.start < ?", (pid, drained, first)).fetchone()[0]
    return {"resume_step_cpu_ms": round((step[1] - step[0]) / 1e6, 2), "drain_into_step_ms": round((drained - step[0]) / 1e6, 2),
            "gpu_idle_after_drain_ms": round((first - drained) / 1e6, 2),
            "own_resume_ms": round(own / 1e6, 2) if own is not None else None}


def kinds(rows):
    """The steps after the control stretch (the last run of steps without kernels), by kind."""
    untraced = [i for i, r in enumerate(rows) if r[4] == 0]
    if not untraced:
        return None
    after = rows[untraced[-1] + 1:]
    out = {"resume": [], "ops": [], "kernels": [], "kernel_spans": []}
    for i, (number, ms, placed, recorded, kernels, start, end) in enumerate(after):
        if kernels == 0:
            continue
        kind = "resume" if i == 0 else "ops" if recorded > 0 else "kernels" if placed > 0 else "ops"
        out[kind].append(ms)
        if kind == "kernels":
            out["kernel_spans"].append((start, end))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpuscope", default="build/bin/gpuscope")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--calls", action="store_true", help="also the launch calls of the kernels-only steps")
    ap.add_argument("--resume", action="store_true", help="also what the resume after the control stretch cost")
    ap.add_argument("recordings", nargs="+")
    args = ap.parse_args()
    results = []
    for path in args.recordings:
        db, temp = readable(path)
        try:
            base, pid = untraced_ms(args.gpuscope, db)
            by = kinds(steps(db, pid)) if pid is not None else None
            calls = launch_calls(db, pid, by["kernel_spans"]) if args.calls and by and by["kernel_spans"] else None
            resumed = resume(db, pid) if args.resume and pid is not None else None
        finally:
            if temp:
                os.unlink(temp)
        name = os.path.basename(path)
        if not base or not by or not by["kernels"]:
            results.append({"recording": name, "why": "no untraced control stretch or no kernels-only steps"})
            continue
        row = {"recording": name, "untraced_ms": round(base, 3)}
        for kind, values in by.items():
            if values and kind != "kernel_spans":
                row[kind + "_ms"] = round(statistics.median(values), 3)
                row[kind + "_steps"] = len(values)
                row[kind + "_pct"] = round(100 * (statistics.median(values) / base - 1), 1)
        ops_extra = (row.get("ops_ms", row["kernels_ms"]) - row["kernels_ms"]) * 2 / 50
        row["long_job_pct"] = round(100 * ((row["kernels_ms"] + ops_extra) / base - 1), 1)
        if calls:
            row.update(calls)
        if resumed:
            row.update(resumed)
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
    if args.calls:
        print()
        print("| recording | launches a step | launch call: median, mean | CUDA calls a step (all threads) | kernels-only step over untraced |")
        print("|---|---:|---:|---:|---:|")
        for r in results:
            if "launches_per_step" in r:
                print("| %s | %.0f | %.1f us, %.1f us | %.2f ms | %+.2f ms |" % (
                    r["recording"], r["launches_per_step"], r["launch_call_us_median"], r["launch_call_us_mean"],
                    r["cuda_calls_ms"], r["kernels_ms"] - r["untraced_ms"]))
    if args.resume:
        print()
        print("| recording | resume step on the CPU | drain ended into it (CPU lead given up, GPU busy) "
              "| GPU idle after the drain to the first kernel | of it gpuscope's own resume ranges |")
        print("|---|---:|---:|---:|---:|")
        for r in results:
            if "gpu_idle_after_drain_ms" in r:
                print("| %s | %.1f ms | %.1f ms | %.1f ms | %s |" % (
                    r["recording"], r["resume_step_cpu_ms"], r["drain_into_step_ms"], r["gpu_idle_after_drain_ms"],
                    "%.1f ms" % r["own_resume_ms"] if r["own_resume_ms"] is not None else "not recorded (before 2026-12-05)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
