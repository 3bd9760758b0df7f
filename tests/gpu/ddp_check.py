#!/usr/bin/env python3
"""A DistributedDataParallel job under torchrun, recorded and analysed across ranks: the checks
of issue 20, in one run (the `ddp` step of tests/gpu/session.sh, on nvidia-h200-x2).

  1. full       `record --full` of 2 ranks over NCCL, one GPU each: rc 0, both ranks in the one
                file, NCCL kernels on both devices.
  2. sampled    `record --sample 0.3,0.7` (CUPTI torn down while untraced): rc 0 before the
                timeout (no hang while one rank drains its GPU and the other launches the
                matching all-reduce), both ranks, NCCL kernels on both devices,
                check_sampled.py --min-finalizes 2.
  3. straggler  rank 1's Dataset sleeps 20 ms more a step: `straggler` is the top finding and
                names rank 1 with ~20 ms a step; `collective-wait` has the other rank waiting
                ~20 ms a step.
  4. overlap    each rank's NCCL overlap with compute in `analyze` (ranks section) against HTA's
                get_comm_comp_overlap on `export --tensorboard` of the full recording
                (tests/gpu/hta_overlap.py; HTA itself where it is installed): within 5 points.
  5. cost       plain job against `record` (default), alternated rounds: median step of each,
                and the recording's own traced-against-untraced figure.
  6. small      a short `record --full` of the straggler variant (12 steps, a small model) kept
                as ddp_BACKEND_2ranks.db.zst, with its analyze output, for tests/data and a
                golden cross-rank report in CI.

--device cpu --backend gloo runs the same on the CPU (the NCCL, CUPTI and overlap checks are
skipped and say so): how the script is tried on a machine without GPUs.
Writes OUT/ddp_check.jsonl (one object per check), the jobs' logs and the small recording (the
others stay in --work) and prints one line per check; exit 1 when a check failed.
"""
import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "torch", "ddp_gloo.py")
PREFIX = "GPUSCOPE_SAMPLE "

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--gpuscope", default=os.path.join(ROOT, ".carry", "bin", "gpuscope"))
parser.add_argument("--python", default=sys.executable)
parser.add_argument("--out", default=os.environ.get("OUT", "/tmp/gpuscope_ddp"),
                    help="results, logs and the small recording")
parser.add_argument("--work", default="/tmp/gpuscope_ddp_work", help="the other recordings and exports")
parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
parser.add_argument("--backend", choices=["nccl", "gloo"], default="nccl")
parser.add_argument("--nproc", type=int, default=2)
parser.add_argument("--steps", type=int, default=60)
parser.add_argument("--layers", type=int, default=8)
parser.add_argument("--width", type=int, default=4096)
parser.add_argument("--batch", type=int, default=512)
parser.add_argument("--rounds", type=int, default=3, help="alternated rounds of the tracing-cost check")
parser.add_argument("--timeout", type=int, default=240, help="seconds per job")
parser.add_argument("--only", default="full,sampled,straggler,overlap,cost,small")
args = parser.parse_args()
GPU = args.device == "cuda"
os.makedirs(args.out, exist_ok=True)
os.makedirs(args.work, exist_ok=True)
RESULTS = os.path.join(args.out, "ddp_check.jsonl")
failures = 0


def report(check, ok, what, **facts):
    global failures
    failures += 0 if ok else 1
    print("%s %s: %s" % ("ok  " if ok else "FAIL", check, what), flush=True)
    with open(RESULTS, "a") as f:
        f.write(json.dumps(dict(check=check, ok=ok, what=what, **facts)) + "\n")


def skip(check, why):
    print("skip %s: %s" % (check, why), flush=True)
    with open(RESULTS, "a") as f:
        f.write(json.dumps(dict(check=check, ok=None, what="skipped: " + why)) + "\n")


def job(*extra, steps=None, model=None):
    model = model or ["--layers", str(args.layers), "--width", str(args.width), "--batch", str(args.batch)]
    # --redirects/--tee: torch 1.13's torchrun fails without them; the ranks' lines then carry a prefix.
    return [args.python, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=%d" % args.nproc,
            "--redirects", "1", "--tee", "1", SAMPLE, "--device", args.device, "--backend", args.backend, "--steps", str(steps or args.steps)] + model + list(extra)


def run(command, name):
    """Runs command with the timeout; (rc, seconds, per-rank result lines). rc None: timed out."""
    log = os.path.join(args.out, name + ".log")
    t0 = time.monotonic()
    with open(log, "w") as f:
        try:
            p = subprocess.run(command, stdout=subprocess.PIPE, stderr=f, text=True, timeout=args.timeout, cwd=ROOT)
        except subprocess.TimeoutExpired:
            return None, time.monotonic() - t0, []
    f_out = p.stdout or ""
    with open(log, "a") as f:
        f.write(f_out)
    lines = [json.loads(l[l.index(PREFIX) + len(PREFIX):]) for l in f_out.splitlines() if PREFIX in l]
    return p.returncode, time.monotonic() - t0, lines


def record(name, *options, extra=(), steps=None, model=None):
    db = os.path.join(args.work, name + ".db")
    command = [args.gpuscope, "record", "--force", "-o", db] + list(options) + ["--"] + job(*extra, steps=steps, model=model)
    rc, seconds, lines = run(command, name)
    return db, rc, seconds, lines


def analyze(db, *options):
    """analyze's JSON report, or {} after reporting why there is none."""
    out = db + ".json"
    p = subprocess.run([args.gpuscope, "analyze", db, "--format", "json", "--force", "-o", out] + list(options),
                       capture_output=True, text=True)
    if p.returncode != 0:
        report("analyze", False, "%s: %s" % (os.path.basename(db), p.stderr.strip()))
        return {}
    with open(out) as f:
        return json.load(f)


def ranks_in(db):
    with sqlite3.connect(db) as c:
        return sorted(r for (r,) in c.execute("SELECT rank FROM process WHERE rank IS NOT NULL"))


def nccl_devices(db):
    """{device: NCCL kernels} and {pid: NCCL kernels}."""
    q = ("SELECT k.device, k.pid, count(*) FROM kernel k JOIN string s ON s.id = k.name_id "
         "WHERE lower(s.value) LIKE '%nccl%' GROUP BY k.device, k.pid")
    with sqlite3.connect(db) as c:
        rows = list(c.execute(q))
    by_device, by_pid = {}, {}
    for device, pid, n in rows:
        by_device[device] = by_device.get(device, 0) + n
        by_pid[pid] = by_pid.get(pid, 0) + n
    return by_device, by_pid


def metric(finding, name):
    for m in finding.get("evidence", {}).get("metrics", []):
        if m["name"] == name:
            return m["value"]
    return None


def check_job(name, db, rc, seconds):
    report(name, rc == 0, "torchrun job of %d ranks exits 0 within %d s (rc %s, %.0f s)" % (args.nproc, args.timeout, rc, seconds),
           rc=rc, seconds=round(seconds, 1))
    if rc is None or not os.path.exists(db):
        return False
    ranks = ranks_in(db)
    report(name, ranks == list(range(args.nproc)), "every rank in the one file: %s" % ranks, ranks=ranks)
    if not GPU or args.backend != "nccl":
        skip(name + " nccl", "no NCCL on --device %s --backend %s" % (args.device, args.backend))
        return True
    by_device, by_pid = nccl_devices(db)
    report(name, len(by_device) >= args.nproc and len(by_pid) >= args.nproc,
           "NCCL kernels on every device and rank: by device %s" % by_device, by_device=by_device)
    return True


wanted = set(args.only.split(","))
open(RESULTS, "w").close()

if "full" in wanted or "overlap" in wanted:
    db, rc, seconds, _ = record("full", "--full")
    if check_job("full", db, rc, seconds) and "overlap" in wanted:
        if not GPU or args.backend != "nccl":
            skip("overlap", "no NCCL kernels on --device %s --backend %s" % (args.device, args.backend))
        else:
            a = analyze(db)
            ranks = [{k: r.get(k) for k in ("rank", "communication_ms_per_step", "comm_overlap_pct")} for r in a.get("ranks", [])]
            report("overlap", all(r["comm_overlap_pct"] is not None for r in ranks) and len(ranks) == args.nproc,
                   "analyze reports each rank's NCCL overlap with compute: %s" % ranks, ranks=ranks)
            tb = os.path.join(args.work, "full_tb")
            shutil.rmtree(tb, ignore_errors=True)
            subprocess.run([args.gpuscope, "export", db, "--tensorboard", tb, "-q"], check=False)
            p = subprocess.run([args.python, os.path.join(ROOT, "tests", "gpu", "hta_overlap.py"), tb,
                                "--against", db + ".json", "--tolerance", "5"], capture_output=True, text=True)
            print(p.stdout + p.stderr, end="")
            report("overlap", p.returncode == 0, "within 5 points of HTA's get_comm_comp_overlap on our export",
                   hta=p.stdout.strip())

if "sampled" in wanted:
    db, rc, seconds, _ = record("sampled", "--sample", "0.3,0.7", steps=max(args.steps, 200))
    if check_job("sampled", db, rc, seconds):
        if GPU:
            p = subprocess.run([args.python, os.path.join(ROOT, "tests", "gpu", "check_sampled.py"), "--min-finalizes", "2", db],
                               capture_output=True, text=True)
            print(p.stdout + p.stderr, end="")
            report("sampled", p.returncode == 0, "check_sampled.py --min-finalizes 2 on every process")
        else:
            skip("sampled check_sampled", "no CUPTI on the CPU")

if "straggler" in wanted:
    db, rc, seconds, _ = record("straggler", extra=["--straggler-rank", "1", "--straggler-ms", "20"])
    if check_job("straggler", db, rc, seconds):
        a = analyze(db)
        findings = a.get("findings", [])
        top = findings[0] if findings else {}
        extra = metric(top, "extra_ms_per_step") or 0
        report("straggler", top.get("id") == "straggler" and metric(top, "straggler_rank") == 1 and 14 <= extra <= 28,
               "top finding names rank 1 with ~20 ms a step: %s rank %s, %.1f ms" % (top.get("id"), metric(top, "straggler_rank"), extra),
               findings=[(f["id"], f["saving_ms_per_step"]) for f in findings])
        wait = next((f for f in findings if f["id"] == "collective-wait"), {})
        others = metric(wait, "others_wait_ms_per_step") if wait else None
        report("straggler", others is not None and 14 <= others <= 30,
               "collective-wait: the other rank waits ~20 ms a step (%s ms)" % others)

if "cost" in wanted:
    rows = []
    for round_ in range(args.rounds):
        for mode in (["plain", "default"] if round_ % 2 == 0 else ["default", "plain"]):
            if mode == "plain":
                rc, seconds, lines = run(job(), "cost_plain")
                inside = None
            else:
                db, rc, seconds, lines = record("cost_default")
                inside = None
                if rc == 0:
                    inside = (analyze(db).get("summary", {}).get("untraced") or {}).get("tracing_cost_pct")
            medians = [l["median_step_ms"] for l in lines if l.get("median_step_ms")]
            rows.append({"round": round_ + 1, "mode": mode, "rc": rc, "step_ms": max(medians) if medians else None,
                         "inside_pct": inside})
            print("cost round %d %s: rc %s, step %s ms (slowest rank's median), inside %s" %
                  (round_ + 1, mode, rc, rows[-1]["step_ms"], inside), flush=True)
    ratios = []
    for r in range(1, args.rounds + 1):
        p = next((x["step_ms"] for x in rows if x["round"] == r and x["mode"] == "plain"), None)
        d = next((x["step_ms"] for x in rows if x["round"] == r and x["mode"] == "default"), None)
        if p and d:
            ratios.append(100.0 * (d / p - 1))
    ok = bool(ratios)
    report("cost", ok, "tracing cost of the DDP job, per round: %s %%; median %s %%" % (
        [round(x, 1) for x in ratios], round(statistics.median(ratios), 1) if ratios else None), rows=rows)

if "small" in wanted:
    # The straggler variant, so the committed recording's cross-rank report has a finding to name.
    db, rc, seconds, _ = record("ddp_small", "--full", steps=12, extra=["--straggler-rank", "1", "--straggler-ms", "20"],
                                model=["--layers", "2", "--width", "1024", "--batch", "32"])
    if check_job("small", db, rc, seconds):
        subprocess.run([args.gpuscope, "analyze", db, "-o", os.path.join(args.out, "ddp_small_report.txt"), "--force"])
        name = "ddp_%s_%dranks.db" % (args.backend, args.nproc)
        shutil.copy(db, os.path.join(args.out, name))
        subprocess.run(["zstd", "-q", "-19", "-f", "--rm", os.path.join(args.out, name)])
        report("small", os.path.exists(os.path.join(args.out, name + ".zst")), "kept %s.zst for tests/data" % name)

print("ddp_check: %d check(s) failed; results in %s" % (failures, RESULTS))
sys.exit(1 if failures else 0)
