#!/usr/bin/env python3
"""Records the torch samples on a GPU machine with the torch plugin and prints
what matters for it: kernel time linked to ops, steps, DataLoader share,
allocator peak against torch.cuda.max_memory_allocated(), drops, the job's
exit code under forked workers and torch.profiler, the libtorch trainer, a
plugin built for another torch, and the per-op cost. Run by gpu_check.sh."""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--gpuscope", required=True)
ap.add_argument("--python", required=True)
ap.add_argument("--plugin", required=True)
ap.add_argument("--trainer", required=True)
ap.add_argument("--samples", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--debian-plugin", default="")
ap.add_argument("--callback-cost", default="", help="torch_plugin_callback_cost built for this torch")
ap.add_argument("--cases", default="", help="comma-separated case names to run (default: all)")
ap.add_argument("--no-bench", action="store_true", help="skip the per-op cost benchmark")
args = ap.parse_args()
TORCH = os.path.join(args.samples, "torch")
RESULTS = {}


def record(name, command, env=None, timeout=120, plugin=None):
    db = os.path.join(args.out, name + ".db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    full_env = dict(os.environ, GPUSCOPE_TORCH_PLUGIN=plugin or args.plugin)
    full_env.update(env or {})
    t0 = time.time()
    try:
        r = subprocess.run([args.gpuscope, "record", "-o", db, "--"] + command, capture_output=True, text=True,
                           timeout=timeout, env=full_env)
        rc, out, err = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = "timeout", "", ""
    sample = {}
    for line in out.splitlines():
        if "GPUSCOPE_SAMPLE " in line:
            sample = json.loads(line.split("GPUSCOPE_SAMPLE ", 1)[1])
    gs_lines = [l for l in err.splitlines() if l.startswith("gpuscope:")]
    return db, {"rc": rc, "wall_s": round(time.time() - t0, 1), "sample": sample, "gpuscope_stderr": gs_lines,
                "stderr_tail": err.splitlines()[-5:] if rc != 0 else []}


def analyze(db):
    con = sqlite3.connect(db)
    q = lambda sql, *p: con.execute(sql, p).fetchall()
    res = {}
    res["ops"] = q("SELECT count(*) FROM op")[0][0]
    res["ops_with_shapes"] = q("SELECT count(*) FROM op WHERE shapes_id IS NOT NULL")[0][0]
    res["ops_with_external_id"] = q("SELECT count(*) FROM op WHERE external_id IS NOT NULL")[0][0]
    res["kernels"] = q("SELECT count(*) FROM kernel")[0][0]
    res["cupti_status"] = [r[0] for r in q("SELECT DISTINCT cupti_status FROM process")]
    ext = {}
    for pid, corr, eid in q("SELECT pid, correlation, external_id FROM external_correlation"):
        ext[(pid, corr)] = eid
    op_by_ext = {}
    for pid, eid, name in q("""SELECT o.pid, o.external_id, n.value FROM op o JOIN string n ON n.id = o.name_id
                                WHERE o.external_id IS NOT NULL"""):
        op_by_ext[(pid, eid)] = name
    total = linked = 0
    by_op = {}
    for pid, corr, dur in q("SELECT pid, correlation, end - start FROM kernel"):
        total += dur
        name = op_by_ext.get((pid, ext.get((pid, corr))))
        if name is not None:
            linked += dur
            by_op[name] = by_op.get(name, 0) + dur
    res["kernel_time_ms"] = round(total / 1e6, 3)
    res["kernel_time_linked_pct"] = round(100.0 * linked / total, 2) if total else None
    res["top_ops_by_kernel_ms"] = sorted(((round(v / 1e6, 3), k) for k, v in by_op.items()), reverse=True)[:8]
    steps = {src: (n, t) for src, n, t in q("SELECT source, count(*), sum(end - start) FROM step GROUP BY source")}
    res["steps"] = {src: n for src, (n, _) in steps.items()}
    # Profiler steps win over optimizer ones, as the analyzer should read them.
    step_ns = steps[1][1] if 1 in steps else steps[2][1] if 2 in steps else 0
    loader = q("SELECT count(*), sum(end - start) FROM range WHERE source = 3")[0]
    res["dataloader_ranges"] = loader[0]
    res["dataloader_share_pct"] = round(100.0 * (loader[1] or 0) / step_ns, 2) if step_ns else None
    mem = q("""SELECT device, op, count(*), max(total_allocated), max(total_reserved) FROM memory_event
               WHERE source = 2 GROUP BY device, op""")
    res["torch_memory_events"] = mem
    res["oom_counters"] = q("SELECT count(*) FROM counter c JOIN string n ON n.id = c.name_id "
                            "WHERE n.value = 'torch_oom_requested_bytes'")[0][0]
    res["dropped_cpu_records"] = q("SELECT sum(value) FROM collector_stat WHERE key = 'dropped_cpu_records'")[0][0]
    res["messages"] = [r[0] for r in q("SELECT text FROM message")][:5]
    res["meta"] = dict(q("SELECT key, value FROM meta WHERE key LIKE 'torch%'"))
    con.close()
    return res


def case(name, command, **kw):
    if args.cases and name not in args.cases.split(","):
        return
    db, info = record(name, command, **kw)
    if os.path.exists(db):
        try:
            info.update(analyze(db))
        except Exception as e:  # keep going: the report says what broke
            info["analyze_error"] = str(e)
    if info.get("sample", {}).get("max_memory_allocated") and info.get("torch_memory_events"):
        peak = max(r[3] or 0 for r in info["torch_memory_events"])
        want = info["sample"]["max_memory_allocated"]
        info["allocator_peak_vs_torch_pct"] = round(100.0 * (peak - want) / want, 3)
    RESULTS[name] = info
    keys = ["rc", "wall_s", "ops", "kernels", "kernel_time_linked_pct", "steps", "dataloader_share_pct",
            "allocator_peak_vs_torch_pct", "dropped_cpu_records", "gpuscope_stderr", "stderr_tail", "analyze_error"]
    print(name, json.dumps({k: info[k] for k in keys if k in info}, default=str), flush=True)
    with open(os.path.join(args.out, "gpu_check.json"), "w") as f:
        json.dump(RESULTS, f, indent=1, default=str)


py = args.python
case("mlp_cuda", [py, os.path.join(TORCH, "train_mlp.py"), "--device", "cuda", "--steps", "50"])
case("mlp_cuda_sleep_workers0", [py, os.path.join(TORCH, "train_mlp.py"), "--device", "cuda", "--steps", "20",
                                 "--sleep-ms", "0.2", "--workers", "0"])
case("mlp_cuda_workers2_fork", [py, os.path.join(TORCH, "train_mlp.py"), "--device", "cuda", "--steps", "20",
                                "--sleep-ms", "0.2", "--workers", "2"], timeout=180)
case("launch_bound", [py, os.path.join(TORCH, "launch_bound.py"), "--device", "cuda", "--steps", "30"])
case("compute_bound", [py, os.path.join(TORCH, "compute_bound.py"), "--device", "cuda", "--steps", "10"])
case("mlp_under_torch_profiler", [py, os.path.join(TORCH, "train_mlp.py"), "--device", "cuda", "--steps", "5",
                                  "--profile", os.path.join(args.out, "p.json")])
case("libtorch_trainer_cuda", [args.trainer, "--steps", "20", "--device", "cuda"])
if args.debian_plugin and os.path.exists(args.debian_plugin):
    case("plugin_for_other_torch", [py, os.path.join(TORCH, "train_mlp.py"), "--device", "cuda", "--steps", "3"],
         plugin=args.debian_plugin)

if args.no_bench:
    sys.exit(0)
print("== per-op cost under gpuscope record (CPU ops)", flush=True)
bench = [py, os.path.join(os.path.dirname(os.path.abspath(__file__)), "op_overhead.py"), "--gpuscope", args.gpuscope,
         "--python", py, "--rounds", "5"]
for extra in ([], ["--cpp", args.callback_cost] if args.callback_cost else None):
    if extra is None:
        continue
    r = subprocess.run(bench + extra, capture_output=True, text=True, timeout=400,
                       env=dict(os.environ, GPUSCOPE_TORCH_PLUGIN=args.plugin))
    print(r.stdout[-3000:], r.stderr[-2000:], flush=True)
