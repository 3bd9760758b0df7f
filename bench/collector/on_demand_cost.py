#!/usr/bin/env python3
"""What captures on demand cost (issue 40's goals; docs/on-demand.md), for the GPU machine:

  dormant  step time under `record --on-demand` (nothing triggered) against no profiler,
           alternated pairs, median of the pair ratios (goal: <= +0.5 %)
  after    the steps right after a 20-step capture against the dormant steps before it
           (goal: back within 0.5 % within 2 steps)
  total    a job of --total steps with one capture against the same job without gpuscope,
           alternated pairs (goal: <= +1 %)
  latency  steps from the trigger to the first traced step (goal: <= 2), with --control 0

The job triggers itself (`gpuscope trigger <its pid>` started at step --trigger-at), so the
trigger's moment is known to the step. Each worker writes its step end times (CLOCK_MONOTONIC,
the collector's clock) to a JSON file. Each capture file's collector_stat says what became of
CUPTI after it (issue 51): cupti_state 5 = torn down at the capture's last tick, cupti_finalizes,
cupti_teardown_failures (given up), cupti_teardowns_deferred, cupti_teardown_attempts_failed, ...

  on_demand_cost.py --gpuscope build/bin/gpuscope --python python3 --device cuda --model mlp
  on_demand_cost.py ... --model resnet50 --steps 200 --total 1000
Prints a line per run as it goes, then one JSON line (ON_DEMAND_COST {...}) and a short summary
(SUMMARY lines); --json FILE is rewritten after every pair, so a run cut short leaves what it had."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def worker(a):
    import torch
    from torch import nn
    device = torch.device(a.device)
    torch.manual_seed(0)
    if a.model == "mlp":  # samples/torch/launch_bound.py's loop: ~600 tiny kernels a step
        layers = []
        for _ in range(40):
            layers += [nn.Linear(64, 64), nn.ReLU()]
        model = nn.Sequential(*layers, nn.Linear(64, 10)).to(device)
        x, y = torch.randn(32, 64, device=device), torch.randint(0, 10, (32,), device=device)
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9, foreach=False)
    else:
        try:
            import timm
            model = timm.create_model("resnet50").to(device)
        except ImportError:
            import torchvision
            model = torchvision.models.resnet50().to(device)
        x = torch.randn(a.batch, 3, 224, 224, device=device)
        y = torch.randint(0, 1000, (a.batch,), device=device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    ends, trigger_ns, trigger = [], None, None
    for step in range(a.steps):
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        ends.append(time.monotonic_ns())
        if step + 1 == a.trigger_at:
            trigger_ns = time.monotonic_ns()
            env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}  # the CLI, not a job
            trigger = subprocess.Popen([a.gpuscope, "trigger", str(os.getpid()), "--steps", str(a.capture_steps),
                                        "--control", str(a.control), "-o", a.capture], stderr=subprocess.DEVNULL,
                                       env=env)
    if trigger:
        trigger.wait()
    with open(a.times, "w") as f:
        json.dump({"ends": ends, "trigger_ns": trigger_ns, "trigger_after_step": a.trigger_at - 1}, f)


def run(a, on_demand, steps, trigger_at=0, capture=""):
    times = tempfile.mktemp(suffix=".json", dir=a.work)
    cmd = [a.python, os.path.abspath(__file__), "--worker", "--device", a.device, "--model", a.model,
           "--batch", str(a.batch), "--steps", str(steps), "--times", times, "--gpuscope", a.gpuscope,
           "--python", a.python, "--trigger-at", str(trigger_at), "--capture", capture,
           "--capture-steps", str(a.capture_steps), "--control", str(a.control)]
    if on_demand:
        cmd = [a.gpuscope, "record", "--on-demand", "--"] + cmd
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=a.work)
    if r.returncode != 0:
        sys.exit("on_demand_cost: %s exited %d:\n%s" % (" ".join(cmd[:6]), r.returncode, r.stderr[-2000:]))
    wall = time.monotonic() - t0
    with open(times) as f:
        out = json.load(f)
    out["wall_s"] = wall
    ends = out["ends"]
    out["step_ms"] = [(b - e) / 1e6 for e, b in zip(ends, ends[1:])]  # step_ms[i]: the step ending at ends[i + 1]
    return out


def traced_steps(a, db):
    import sqlite3
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    rows = con.execute("""SELECT s.number FROM step s JOIN range w ON w.source = 7 AND w.pid = s.pid
                          AND w.start <= s.start AND w."end" >= s."end" ORDER BY s.number""").fetchall()
    return [r[0] for r in rows]


STATE_NAMES = ["off", "dormant", "subscribed", "tracing", "draining", "torn down", "deferred", "stopped"]


def capture_stats(db):
    """What the capture's collector says of CUPTI: pauses, teardowns done, deferred, failed and
    given up, and its state at the capture's last tick (collector/cupti_source.h, lifecycle_stats)."""
    import sqlite3
    try:
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
        rows = con.execute("""SELECT key, sum(value) FROM collector_stat WHERE key LIKE 'cupti_%'
                              OR key = 'tracing_pauses' GROUP BY key""").fetchall()
    except sqlite3.Error as e:
        return {"error": str(e)}
    out = dict(rows)
    if "cupti_state" in out:
        out["cupti_state_name"] = STATE_NAMES[out["cupti_state"]] if 0 <= out["cupti_state"] < len(STATE_NAMES) else "?"
    return out


def summary_lines(r):
    """A few lines a person reads: the goals of issue 51 and what CUPTI's teardown did."""
    lines = ["SUMMARY %s %s: dormant %+.2f %% (pairs %s; goal <= +0.5 %%)" % (
        r["device"], r["model"], r.get("dormant_cost_pct", float("nan")), r.get("dormant_pair_ratios"))]
    if "total_cost_pct" in r:
        lines.append("SUMMARY   job of %d steps with one %d-step capture: wall %+.2f %%, its steps %+.2f %% (pairs %s; goal <= +1 %%)"
                     % (r["total_steps"], r["capture_steps"], r["total_cost_pct"], r.get("total_steps_cost_pct", float("nan")),
                        r["total_pair_ratios"]))
    for i, a in enumerate(r.get("after_capture", [])):
        lines.append("SUMMARY   after capture %d (x dormant step): steps 1,2 %s, 3-50 %s, 51-end %s (goal: within 0.5 %% by step 2)"
                     % (i, a.get("steps_1_2"), a.get("steps_3_50"), a.get("steps_51_end")))
    lines.append("SUMMARY   trigger latency (steps): %s (goal <= 2)" % r.get("trigger_latency_steps"))
    for i, st in enumerate(r.get("capture_stats", [])):
        keys = ["cupti_state_name", "cupti_finalizes", "cupti_teardown_failures", "cupti_teardowns_deferred",
                "cupti_teardown_attempts_failed", "cupti_buffers_discarded", "cupti_kept_for_graphs",
                "cupti_teardown_forbidden", "tracing_pauses", "error"]
        lines.append("SUMMARY   capture %d collector_stat: %s" % (i, ", ".join("%s=%s" % (k, st[k]) for k in keys if k in st)))
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--gpuscope", required=True)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--model", choices=["mlp", "resnet50"], default="mlp")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=300, help="steps per dormant run")
    ap.add_argument("--total", type=int, default=1000, help="steps of the job with one capture")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--capture-steps", type=int, default=20)
    ap.add_argument("--control", type=int, default=0)
    ap.add_argument("--trigger-at", type=int, default=0)
    ap.add_argument("--times", default="")
    ap.add_argument("--capture", default="")
    ap.add_argument("--work", default="")
    ap.add_argument("--json", default="")
    ap.add_argument("--summary-of", default="", help="print the SUMMARY lines of a --json file (a run cut short)")
    a = ap.parse_args()
    if a.worker:
        return worker(a)
    if a.summary_of:
        with open(a.summary_of) as f:
            for s in summary_lines(json.load(f)):
                print(s)
        return
    a.work = a.work or tempfile.mkdtemp(prefix="on_demand_cost_")
    warm = 20
    dormant = []
    result = {"device": a.device, "model": a.model, "pairs": a.pairs, "steps": a.steps, "total_steps": a.total,
              "capture_steps": a.capture_steps}

    def save():
        if a.json:
            with open(a.json + ".tmp", "w") as f:
                f.write(json.dumps(result, indent=1) + "\n")
            os.replace(a.json + ".tmp", a.json)

    def progress(text):
        print("on_demand_cost %s %s: %s" % (a.model, time.strftime("%H:%M:%S"), text), flush=True)

    for pair in range(a.pairs):  # alternated: plain first in even pairs
        first = pair % 2 == 1
        r1 = run(a, first, a.steps)
        r2 = run(a, not first, a.steps)
        plain, od = (r2, r1) if first else (r1, r2)
        dormant.append(statistics.median(od["step_ms"][warm:]) / statistics.median(plain["step_ms"][warm:]))
        result["dormant_cost_pct"] = round((statistics.median(dormant) - 1) * 100, 2)
        result["dormant_pair_ratios"] = [round(r, 4) for r in dormant]
        progress("dormant pair %d: %.4f (plain median step %.3f ms)" % (pair, dormant[-1],
                                                                         statistics.median(plain["step_ms"][warm:])))
        save()
    totals, step_totals, after, latency, stats = [], [], [], [], []
    for pair in range(a.pairs):
        at = a.total // 2
        capture = os.path.join(a.work, "capture_%d.db" % pair)
        od = run(a, True, a.total, trigger_at=at, capture=capture)
        plain = run(a, False, a.total)
        totals.append(od["wall_s"] / plain["wall_s"])
        step_totals.append(sum(od["step_ms"]) / sum(plain["step_ms"]))
        traced = traced_steps(a, capture) if os.path.exists(capture) else []
        stats.append(capture_stats(capture) if os.path.exists(capture) else {"error": "no capture file"})
        result.update({"total_cost_pct": round((statistics.median(totals) - 1) * 100, 2),
                       "total_pair_ratios": [round(r, 4) for r in totals],
                       "total_steps_cost_pct": round((statistics.median(step_totals) - 1) * 100, 2),
                       "trigger_latency_steps": latency, "after_capture": after, "capture_stats": stats})
        if traced:
            latency.append(traced[0] - od["trigger_after_step"])
            before = statistics.median(od["step_ms"][at - 50:at - 1])
            last = traced[-1]
            # Step numbers count from 0 as the collector counts them: step n ends at ends[n].
            later = od["step_ms"][last + 2:last + 49]
            rest = od["step_ms"][last + 49:]
            after.append({"steps_1_2": [round(od["step_ms"][n - 1] / before, 4) for n in (last + 1, last + 2)
                                        if n - 1 < len(od["step_ms"])],
                          "steps_3_50": round(statistics.median(later) / before, 4) if later else None,
                          "steps_51_end": round(statistics.median(rest) / before, 4) if rest else None})
        progress("job pair %d: wall %.4f, steps %.4f; traced %s; after %s; CUPTI %s" % (
            pair, totals[-1], step_totals[-1], "%d-%d" % (traced[0], traced[-1]) if traced else "none",
            after[-1] if traced else "-", stats[-1]))
        save()
    line = "ON_DEMAND_COST " + json.dumps(result)
    print(line, flush=True)
    for s in summary_lines(result):
        print(s, flush=True)
    save()


if __name__ == "__main__":
    main()
