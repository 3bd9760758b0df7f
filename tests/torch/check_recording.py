#!/usr/bin/env python3
"""Records one sample under `gpuscope record` with the torch plugin and checks
the database with SQL. One case per CTest test:

  check_recording.py CASE --gpuscope BIN --python PY --samples DIR --trainer BIN --mismatch-plugin SO

Prints one line per check and exits 1 on any failure."""
import argparse
import bisect
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


ap = argparse.ArgumentParser()
ap.add_argument("case")
ap.add_argument("--gpuscope", required=True)
ap.add_argument("--python", required=True)
ap.add_argument("--samples", required=True)
ap.add_argument("--trainer", required=True)
ap.add_argument("--mismatch-plugin", required=True)
args = ap.parse_args()
TMP = tempfile.mkdtemp(prefix="gpuscope_torch_test_")
TORCH_SAMPLES = os.path.join(args.samples, "torch")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def record(name, command, env=None, trace=None, timeout=90, options=(), control=False):
    """Runs `gpuscope record -o TMP/name.db [options] -- command`; returns (result, db).
    Every step is traced (--full) unless `control` keeps record's default control
    stretch (or the options schedule tracing themselves)."""
    db = os.path.join(TMP, name + ".db")
    options = list(options)
    if not control and not any(o in ("--sample", "--delay", "--duration") for o in options):
        options.append("--full")
    argv = [args.gpuscope, "record", "-o", db] + options
    if trace:
        argv += ["--trace", trace]
    full_env = dict(os.environ)
    full_env.update(env or {})
    try:
        result = subprocess.run(argv + ["--"] + command, capture_output=True, text=True, timeout=timeout,
                                env=full_env, cwd=TMP)
    except subprocess.TimeoutExpired:
        check(False, "%s finished within %d s (no hang)" % (name, timeout))
        raise SystemExit(1)
    if result.returncode != 0:
        sys.stdout.write(result.stdout[-3000:])
        sys.stdout.write(result.stderr[-3000:])
    return result, db


def q(db, sql, *params):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def q1(db, sql, *params):
    rows = q(db, sql, *params)
    return rows[0][0] if rows else None


def record_torchrun(name, command, **kw):
    """record() for a torchrun job. Under heavy load torchrun's own elastic agent
    can lose the connection to its rendezvous store after the workers are done
    ("RendezvousConnectionError ... Broken pipe", seen once in a CI-like run on
    2 busy cores with every rank recorded in full): the launcher's failure, not
    the job's, so the run is repeated once and that is said."""
    result, db = record(name, command, **kw)
    if result.returncode != 0 and "RendezvousConnectionError" in result.stderr:
        print("note: torchrun lost its rendezvous store (launcher under load); running %s once more" % name)
        os.remove(db)
        result, db = record(name, command, **kw)
    return result, db


def ops_begun_outside(db):
    """Ops that began outside every traced stretch (range source 7) of their own process."""
    windows = {}
    for pid, start, end in q(db, 'SELECT pid, start, "end" FROM range WHERE source = 7 ORDER BY start'):
        windows.setdefault(pid, []).append((start, end))
    starts = {pid: [w[0] for w in ws] for pid, ws in windows.items()}
    outside = 0
    for pid, start in q(db, "SELECT pid, start FROM op"):
        i = bisect.bisect_right(starts.get(pid, []), start) - 1
        outside += i < 0 or start > windows[pid][i][1]
    return outside


def op_rows(db, name):
    return q(db, """SELECT sh.value, dt.value FROM op o JOIN string n ON n.id = o.name_id
                    LEFT JOIN string sh ON sh.id = o.shapes_id LEFT JOIN string dt ON dt.id = o.dtypes_id
                    WHERE n.value = ?""", name)


def train_mlp(workers, extra=()):
    return [args.python, os.path.join(TORCH_SAMPLES, "train_mlp.py"), "--device", "cpu", "--steps", "20",
            "--warmup", "0", "--batch", str(BATCH), "--sleep-ms", str(SLEEP_MS), "--workers", str(workers)] + list(extra)


# train_mlp.py: its Dataset sleeps --sleep-ms per item and each step fetches one
# batch, so the DataLoader waits STEPS * BATCH * SLEEP_MS in all.
STEPS, BATCH, SLEEP_MS = 20, 16, 5


def common_training_checks(db, loader_iter):
    steps = q(db, "SELECT number, source FROM step ORDER BY number")
    check(len(steps) == STEPS, "%d steps found (got %d)" % (STEPS, len(steps)))
    check([n for n, _ in steps] == list(range(len(steps))), "steps numbered from 0 without gaps")
    check({s for _, s in steps} == {2}, "steps come from optimizer steps (source 2)")
    loader = q(db, """SELECT n.value, r.end - r.start FROM range r JOIN string n ON n.id = r.name_id
                      WHERE r.source = 3""")
    check(len(loader) == STEPS, "%d DataLoader ranges (got %d)" % (STEPS, len(loader)))
    check(all(loader_iter in name for name, _ in loader), "DataLoader ranges name %s" % loader_iter)
    optimizer = dict(q(db, """SELECT n.value, count(*) FROM range r JOIN string n ON n.id = r.name_id
                              WHERE r.source = 4 GROUP BY n.value"""))
    check(optimizer.get("Optimizer.step#Adam.step") == STEPS, "one Optimizer.step range per step: %s" % optimizer)
    check(optimizer.get("Optimizer.zero_grad#Adam.zero_grad") == STEPS, "one zero_grad range per step")
    # Every step holds exactly one DataLoader wait.
    per_step = q(db, """SELECT count(r.id) FROM step s LEFT JOIN range r
                        ON r.source = 3 AND r.pid = s.pid AND r.start >= s.start AND r.end <= s.end
                        GROUP BY s.id""")
    check(per_step and all(c == 1 for (c,) in per_step), "each step contains one DataLoader wait")
    return loader


class SleepProbe(threading.Thread):
    """Sleeps SLEEP_MS again and again while the job runs, measuring how long
    this machine really takes to deliver such a sleep under the same load."""

    def __init__(self):
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.ratios = []

    def run(self):
        while not self.stop.is_set():
            t0 = time.perf_counter()
            time.sleep(SLEEP_MS / 1000.0)
            self.ratios.append((time.perf_counter() - t0) / (SLEEP_MS / 1000.0))


def sample_result(stdout):
    for line in stdout.splitlines():
        if line.startswith("GPUSCOPE_SAMPLE "):
            return json.loads(line[len("GPUSCOPE_SAMPLE "):])
    return {}


@case
def dataloader_workers0():
    probe = SleepProbe()
    probe.start()
    result, db = record("workers0", train_mlp(0))
    probe.stop.set()
    check(result.returncode == 0, "train_mlp.py --workers 0 exits 0 (got %d)" % result.returncode)
    check("GPUSCOPE_SAMPLE" in result.stdout, "the job's stdout passes through")
    loader = common_training_checks(db, "_SingleProcessDataLoaderIter.__next__")
    # The recorded waits against the job's own clock around next(batches).
    waits = sorted(d for _, d in loader)
    recorded_median_ms = waits[len(waits) // 2] / 1e6 if waits else 0
    measured_ms = sample_result(result.stdout).get("median_data_wait_ms") or 0
    check(measured_ms and abs(recorded_median_ms - measured_ms) <= 0.05 * measured_ms,
          "median DataLoader range %.2f ms within 5%% of the %.2f ms the job measured around next()"
          % (recorded_median_ms, measured_ms))
    # Against the sleep injected: on a busy machine both the sleeps and the
    # per-item work around them stretch, so the check holds where the machine
    # is not overloaded (load average per core, and a 5 ms sleep probed during
    # the run) and says so where it is.
    injected_ns = STEPS * BATCH * SLEEP_MS * 1e6
    total_ns = sum(d for _, d in loader)
    overshoot = statistics.median(probe.ratios) if probe.ratios else 1.0
    load = os.getloadavg()[0] / (os.cpu_count() or 1)
    what = "DataLoader time %.1f ms within 10%% of the %.1f ms of sleep injected" % (total_ns / 1e6, injected_ns / 1e6)
    if overshoot <= 1.05 and load <= 1.0:
        check(abs(total_ns - injected_ns) <= 0.10 * injected_ns, what)
    else:
        print("skip %s: the machine is busy (load %.1f per core, sleeps %.2fx what is asked)" % (what, load, overshoot))
    linear = op_rows(db, "aten::linear")
    addmm = op_rows(db, "aten::addmm")
    check(len(linear) == 4 * STEPS, "aten::linear: 4 layers x %d steps (got %d)" % (STEPS, len(linear)))
    check(len(addmm) == 4 * STEPS, "aten::addmm: 4 layers x %d steps (got %d)" % (STEPS, len(addmm)))
    first_layer = "[[%d,256],[512,256],[512]]" % BATCH
    check((first_layer, '["float","float","float"]') in linear,
          "aten::linear of the first layer has shapes %s and float dtypes" % first_layer)
    check(all(s and d and json.loads(s) and json.loads(d) for s, d in linear + addmm),
          "every linear/addmm has shapes and dtypes as JSON")
    check(any(json.loads(s)[1] == [BATCH, 256] and json.loads(d)[:3] == ["float"] * 3 for s, d in addmm),
          "aten::addmm of the first layer takes the [%d,256] batch as float" % BATCH)
    backward = q1(db, "SELECT count(*) FROM op WHERE backward = 1")
    bwd_nodes = q1(db, """SELECT count(*) FROM op o JOIN string n ON n.id = o.name_id
                          WHERE n.value = 'AddmmBackward0' AND o.backward = 1 AND o.seq_nr IS NOT NULL""")
    check(backward > 0 and bwd_nodes == 4 * STEPS, "backward ops flagged, AddmmBackward0 with sequence numbers")
    fwd_seq = q1(db, """SELECT count(*) FROM op o JOIN string n ON n.id = o.name_id
                        WHERE n.value = 'aten::linear' AND o.backward = 0 AND o.seq_nr IS NOT NULL""")
    check(fwd_seq == 4 * STEPS, "forward aten::linear ops carry sequence numbers")
    plumbing = q1(db, """SELECT count(*) FROM op o JOIN string n ON n.id = o.name_id
                         WHERE n.value LIKE 'profiler::_record_function%'""")
    check(plumbing == 0, "record_function helper ops are left out")
    depth_ok = q1(db, "SELECT count(*) FROM op WHERE depth > 0") > 0 and q1(db, "SELECT min(depth) FROM op") == 0
    check(depth_ok, "op nesting depth recorded")
    meta = dict(q(db, "SELECT key, value FROM meta"))
    check(meta.get("torch_version", "")[:1].isdigit(), "meta torch_version = %s" % meta.get("torch_version"))
    check("torch_build" in meta and "torch_cuda_version" in meta and "torch_git_version" in meta,
          "meta torch_build, torch_cuda_version, torch_git_version present")
    check(q1(db, "SELECT value FROM collector_stat WHERE key = 'dropped_cpu_records'") == 0, "no record dropped")
    check(q1(db, "SELECT count(*) FROM message WHERE severity >= 2") == 0, "no warnings stored")


@case
def dataloader_workers2():
    result, db = record("workers2", train_mlp(2), timeout=60)
    check(result.returncode == 0, "train_mlp.py --workers 2 (fork) exits 0 without hang (got %d)" % result.returncode)
    common_training_checks(db, "_MultiProcessingDataLoaderIter.__next__")
    check(q1(db, "SELECT count(*) FROM process") == 1, "forked workers do not record")
    check(len(op_rows(db, "aten::addmm")) == 4 * STEPS, "the trainer's ops are all there")


@case
def torchrun_gloo():
    # --redirects/--tee 1: Debian's torch 1.13 under Python 3.11 cannot parse
    # the default "0" (an IntFlag change); 1 works with every version.
    command = [args.python, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
               "--redirects", "1", "--tee", "1", os.path.join(TORCH_SAMPLES, "ddp_gloo.py"), "--device", "cpu"]
    result, db = record_torchrun("torchrun", command, timeout=100)
    check(result.returncode == 0, "torchrun job exits 0 (got %d)" % result.returncode)
    ranks = q(db, """SELECT p.rank, p.world_size, (SELECT count(*) FROM op o WHERE o.pid = p.pid),
                            (SELECT count(*) FROM step s WHERE s.pid = p.pid)
                     FROM process p WHERE p.rank IS NOT NULL ORDER BY p.rank""")
    check([r[0] for r in ranks] == [0, 1], "one database holds rank 0 and rank 1: %s" % ranks)
    check(all(r[1] == 2 for r in ranks), "both tagged with world size 2")
    check(all(r[2] > 0 for r in ranks), "both ranks have ops")
    check(all(r[3] == 7 for r in ranks), "both ranks have 7 steps (2 warmup + 5)")
    job_key = q1(db, "SELECT value FROM meta WHERE key = 'job_key'") or ""
    check("TORCHELASTIC_RUN_ID=" in job_key and "MASTER_PORT=" in job_key,
          "meta job_key names the job's rendezvous (gpuscope merge checks it): %r" % job_key)



def analyze_json(db, *options):
    out = subprocess.run([args.gpuscope, "analyze", db, "--format", "json"] + list(options), capture_output=True, text=True)
    check(out.returncode == 0, "analyze %s exits 0: %s" % (" ".join(options), out.stderr[-300:]))
    return json.loads(out.stdout) if out.returncode == 0 else {}


def metric(finding, name):
    return next((m["value"] for m in finding["evidence"]["metrics"] if m["name"] == name), None)


@case
def torchrun_straggler():
    # 4 gloo ranks on the CPU; rank 2's Dataset sleeps 20 ms more per batch, so the other ranks
    # wait for it in every gradient all-reduce. analyze names rank 2 as the straggler (top
    # finding, ~20 ms per step, in its DataLoader) and the others' collective wait (~20 ms per
    # step); the same job without the sleep has no cross-rank finding above 5 %.
    # Every rank's Dataset also sleeps 40 ms per batch (--data-ms): four ranks on a CI machine of two
    # cores are uneven by themselves (rank 0's median step had 1.5 ms more own work than the others',
    # 8 % of a 13 ms step), and longer steps keep that below 5 %.
    def job(name, extra):
        command = [args.python, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=4",
                   "--redirects", "1", "--tee", "1", os.path.join(TORCH_SAMPLES, "ddp_gloo.py"), "--device", "cpu",
                   "--steps", "30", "--width", "128", "--data-ms", "40"] + list(extra)
        result, db = record(name, command, timeout=240)
        check(result.returncode == 0, "%s: torchrun job of 4 ranks exits 0 (got %d)" % (name, result.returncode))
        return db

    db = job("straggler", ["--straggler-rank", "2", "--straggler-ms", "20"])
    report = analyze_json(db)
    ranks = report.get("ranks", [])
    check([r["rank"] for r in ranks] == [0, 1, 2, 3], "ranks section lists ranks 0-3: %s" % [r.get("rank") for r in ranks])
    check(all(r["steps"] >= 25 and r["device"] is None and r["gpu_utilization"] is None for r in ranks),
          "each rank has its steps, no device, no GPU utilization")
    print("     ranks: %s" % [{k: r[k] for k in ("rank", "step_ms_median", "collective_ms_per_step", "data_ms_per_step",
                                                 "compute_ms_per_step")} for r in ranks])
    findings = report.get("findings", [])
    print("     findings: %s" % [(f["id"], f["saving_ms_per_step"], f["saving_pct"]) for f in findings])
    top = findings[0] if findings else {}
    check(top.get("id") == "straggler", "straggler is the top finding")
    extra = metric(top, "extra_ms_per_step") or 0
    check(metric(top, "straggler_rank") == 2 and 14 <= extra <= 28,
          "it names rank 2 with ~20 ms per step (%.1f ms)" % extra)
    where = top.get("evidence", {}).get("top", [])
    check(where and "DataLoader" in where[0]["name"] and 16 <= where[0]["total_ms"] / where[0]["count"] <= 26,
          "its extra time is in its DataLoader (~20 ms per step over the others'): %s" % where[:1])
    wait = next((f for f in findings if f["id"] == "collective-wait"), {})
    others = metric(wait, "others_wait_ms_per_step") if wait else 0
    check(others is not None and 14 <= others <= 30, "the other ranks wait ~20 ms per step in collectives (%.1f ms)" % (others or 0))
    rank2 = analyze_json(db, "--rank", "2")
    check(rank2.get("summary", {}).get("pid") == ranks[2]["pid"] if len(ranks) == 4 else False,
          "--rank 2 analyses rank 2's process")

    db = job("even", [])
    report = analyze_json(db)
    cross = [(f["id"], f["saving_pct"]) for f in report.get("findings", []) if f["id"] in ("straggler", "collective-wait")]
    check(len(report.get("ranks", [])) == 4 and all(pct <= 5 for _, pct in cross),
          "without the sleep no cross-rank finding above 5 %%: %s" % cross)


@case
def torchrun_two_nodes_merge():
    # A job of two "nodes" (torchrun --nnodes 2 on this one host, two ranks each), each node
    # recorded by its own `gpuscope record -o node%q{NODE}.db`, as on a cluster. Both clocks are
    # this host's, so the true offset between the files is the difference of their meta
    # origin_ns: `gpuscope merge` must find it from the collectives alone.
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    nodes = []
    for node in (0, 1):
        command = [args.gpuscope, "record", "--full", "-o", os.path.join(TMP, "node%q{NODE}.db"), "--",
                   args.python, "-m", "torch.distributed.run", "--nnodes=2", "--node_rank=%d" % node,
                   "--nproc_per_node=2", "--master_addr=127.0.0.1", "--master_port=%d" % port,
                   "--redirects", "1", "--tee", "1", os.path.join(TORCH_SAMPLES, "ddp_gloo.py"), "--device", "cpu",
                   "--steps", "30", "--width", "64", "--data-ms", "5"]
        nodes.append(subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                      env=dict(os.environ, NODE=str(node)), cwd=TMP))
        time.sleep(1.0)  # the nodes' recordings start at different times, so their origins differ
    for node, proc in enumerate(nodes):
        try:
            out, _ = proc.communicate(timeout=150)
        except subprocess.TimeoutExpired:
            proc.kill()
            out = ""
        if not check(proc.returncode == 0, "node %d's job exits 0 (got %s)" % (node, proc.returncode)):
            sys.stdout.write(out[-3000:])
            return
    dbs = [os.path.join(TMP, "node%d.db" % n) for n in (0, 1)]
    keys = [q1(db, "SELECT value FROM meta WHERE key = 'job_key'") for db in dbs]
    check(keys[0] and keys[0] == keys[1] and ("MASTER_PORT=%d" % port) in keys[0],
          "both nodes' files carry the job's key: %s" % keys)
    job = os.path.join(TMP, "job.db")
    merged = subprocess.run([args.gpuscope, "merge", dbs[0], dbs[1], "-o", job], capture_output=True, text=True)
    print("     " + merged.stderr.strip().replace("\n", "\n     "))
    if not check(merged.returncode == 0, "merge exits 0"):
        return
    origins = [int(q1(db, "SELECT value FROM meta WHERE key = 'origin_ns'")) for db in dbs]
    offset = int(q1(job, "SELECT value FROM meta WHERE key = 'merge.1.offset_ns'"))
    error_us = (offset - (origins[1] - origins[0])) / 1e3
    # The gtest on the stored recording holds the 50 us of issue 19; a live job on a loaded CI
    # machine of two cores is given more.
    check(abs(error_us) <= 200, "merge finds the offset between the nodes' clocks (%.3f s) to %.1f us"
          % ((origins[1] - origins[0]) / 1e9, error_us))
    report = analyze_json(job)
    check([r["rank"] for r in report.get("ranks", [])] == [0, 1, 2, 3],
          "the merged file's ranks section lists ranks 0-3 of both nodes")
    refused = subprocess.run([args.gpuscope, "merge", dbs[0], dbs[1], "-o", job], capture_output=True, text=True)
    check(refused.returncode == 2 and refused.stderr.count("\n") == 1, "an existing output is refused in one line")


@case
def torchrun_gloo_sampled():
    # record --sample with two ranks: each process keeps its own schedule, switches at its own
    # step boundaries and writes its own traced stretches; no hang, every step of both ranks,
    # ops only in their own process's stretches.
    steps = 800  # ~1 ms each here: several periods of 0.3 s
    command = [args.python, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
               "--redirects", "1", "--tee", "1", os.path.join(TORCH_SAMPLES, "ddp_gloo.py"), "--device", "cpu",
               "--steps", str(steps), "--width", "64"]
    result, db = record_torchrun("torchrun_sampled", command, timeout=100, options=["--sample", "0.1,0.2"])
    check(result.returncode == 0, "torchrun job exits 0 (got %d)" % result.returncode)
    ranks = q(db, """SELECT p.rank, p.pid, (SELECT count(*) FROM step s WHERE s.pid = p.pid),
                            (SELECT count(*) FROM range r WHERE r.pid = p.pid AND r.source = 7),
                            (SELECT count(*) FROM op o WHERE o.pid = p.pid)
                     FROM process p WHERE p.rank IS NOT NULL ORDER BY p.rank""")
    check([r[0] for r in ranks] == [0, 1], "one database holds rank 0 and rank 1")
    check(all(r[2] == steps + 2 for r in ranks), "every step of both ranks recorded: %s" % [r[2] for r in ranks])
    check(all(r[3] >= 2 for r in ranks), "each rank has its own traced stretches (at least 2): %s" % [r[3] for r in ranks])
    check(all(r[4] > 0 for r in ranks), "both ranks have ops")
    # Before its first step a rank switches by time, as in sampled_by_time.
    ops, late = sum(r[4] for r in ranks), ops_begun_outside(db)
    check(late == 0, "%d ops begun inside a traced stretch of their own process: %d not" % (ops, late))

@case
def control_stretch():
    # record's default: steps 4-11 untraced (ops off), at least 0.2 s, then traced again;
    # every step recorded; analyze reports the untraced step time and what tracing cost.
    result, db = record("control", train_mlp(0, ["--steps", "30", "--sleep-ms", "1"]), control=True,
                        env={"GPUSCOPE_TORCH_CPU_MEMORY": "1"})
    check(result.returncode == 0, "job exits 0 (got %d)" % result.returncode)
    steps = q(db, "SELECT number, start, \"end\" FROM step ORDER BY start")
    check(len(steps) == 30, "every step recorded (%d)" % len(steps))
    windows = q(db, "SELECT start, \"end\" FROM range WHERE source = 7 ORDER BY start")
    check(len(windows) == 2, "two traced stretches, before and after the control stretch: %d" % len(windows))
    with_ops = [q1(db, "SELECT count(*) FROM op WHERE start >= ? AND start < ?", s, e) > 0 for _, s, e in steps]
    pattern = "".join("x" if o else "." for o in with_ops)
    untraced = pattern[3:].split("x")[0]
    check(pattern.startswith("xxx.") and len(untraced) >= 8 and pattern.endswith("xxxx"),
          "ops in the 3 warm-up steps, none in 8 or more after them, then ops again: %s" % pattern)
    # The allocator's events: the first 2 steps of each traced stretch only (GPUSCOPE_TORCH_MEMORY_STEPS).
    with_memory = [q1(db, "SELECT count(*) FROM memory_event WHERE source = 2 AND ts >= ? AND ts < ?", s, e) > 0
                   for _, s, e in steps]
    memory = "".join("m" if m else "." for m in with_memory)
    resumed = pattern.index("x", 3)
    check(memory[:2] == "mm" and memory[2:resumed] == "." * (resumed - 2)
          and memory[resumed:resumed + 2] == "mm" and set(memory[resumed + 2:]) == {"."},
          "allocator events in the first 2 steps of each stretch only: %s (ops %s)" % (memory, pattern))
    out = subprocess.run([args.gpuscope, "analyze", db, "--format", "json"], capture_output=True, text=True)
    check(out.returncode == 0, "analyze exits 0: %s" % out.stderr[-300:])
    if out.returncode == 0:
        untraced = json.loads(out.stdout)["summary"]["untraced"]
        # No CUPTI here, so no drain: the untraced steps' CPU bounds stand in.
        check(untraced["method"] == "cpu_steps" and untraced["step_ms"] > 0 and untraced["tracing_cost_pct"] is not None,
              "the report has the untraced step and the tracing cost: %s" % untraced)
    result, db = record("full", train_mlp(0, ["--steps", "12", "--sleep-ms", "0"]), env={"GPUSCOPE_TORCH_CPU_MEMORY": "1"})
    check(q1(db, "SELECT count(*) FROM range WHERE source = 7") == 0, "--full: no traced stretches, every step traced")
    steps = q(db, "SELECT number, start, \"end\" FROM step ORDER BY start")
    quiet = [n for n, s, e in steps
             if q1(db, "SELECT count(*) FROM memory_event WHERE source = 2 AND ts >= ? AND ts < ?", s, e) == 0]
    check(steps and not quiet, "--full: allocator events in every step (none in %s)" % quiet)


@case
def libtorch_trainer():
    result, db = record("trainer", [args.trainer, "--steps", "10", "--device", "cpu"])
    check(result.returncode == 0, "libtorch_trainer exits 0 (got %d)" % result.returncode)
    check(q1(db, "SELECT count(*) FROM op") > 0, "ops recorded in a process without Python")
    check(len(op_rows(db, "aten::addmm")) >= 3 * 8, "aten::addmm recorded")
    steps = q(db, "SELECT number, source FROM step ORDER BY number")
    # No optimizer or profiler markers in C++: backward passes close the steps.
    check(len(steps) >= 8, "steps found from backward passes (%d of 10)" % len(steps))
    check([n for n, _ in steps] == list(range(len(steps))), "steps numbered from 0 without gaps")


@case
def trace_without_torch():
    result, db = record("notorch", train_mlp(0, ["--steps", "2"]), trace="cuda,nvtx")
    check(result.returncode == 0, "job exits 0")
    check(q1(db, "SELECT count(*) FROM op") == 0, "--trace without torch: no ops")
    check(q1(db, "SELECT count(*) FROM meta WHERE key = 'torch_version'") == 0, "--trace without torch: plugin not loaded")


@case
def ops_off():
    # GPUSCOPE_TORCH_OPS=0 (overhead measurements): the callback stays, ops go,
    # ranges and steps stay.
    result, db = record("opsoff", train_mlp(0, ["--steps", "4", "--sleep-ms", "0"]),
                        env={"GPUSCOPE_TORCH_OPS": "0"})
    check(result.returncode == 0, "job exits 0")
    check(q1(db, "SELECT count(*) FROM op") == 0, "GPUSCOPE_TORCH_OPS=0: no ops")
    check(q1(db, "SELECT count(*) FROM step") == 4, "4 steps still found (got %s)" % q1(db, "SELECT count(*) FROM step"))
    check(q1(db, "SELECT count(*) FROM meta WHERE key = 'torch_version'") == 1, "the plugin was loaded")


@case
def ab_blocks():
    # GPUSCOPE_TORCH_AB_STEPS=N (bench/torch_plugin/ab_steps.py): ops in alternate blocks of N
    # steps; steps and ranges in all of them. The switch comes at a step's end, so step k
    # (counted from 0) has ops when k // N is even.
    n = 3
    result, db = record("ab", train_mlp(0, ["--sleep-ms", "0"]), env={"GPUSCOPE_TORCH_AB_STEPS": str(n)})
    check(result.returncode == 0, "job exits 0")
    steps = q(db, 'SELECT number, start, "end" FROM step ORDER BY number')
    check(len(steps) == STEPS, "%d steps found (got %d)" % (STEPS, len(steps)))
    with_ops = [q1(db, 'SELECT count(*) FROM op WHERE start >= ? AND "end" <= ?', s, e) > 0 for _, s, e in steps]
    # Step 0 starts at the job's first activity, before the plugin may have loaded: not checked.
    want = [(k // n) % 2 == 0 for k in range(len(steps))]
    check(with_ops[1:] == want[1:], "ops in alternate blocks of %d steps: %s" % (n, "".join("x" if o else "." for o in with_ops)))
    check(q1(db, "SELECT count(*) FROM range WHERE source IN (3, 4)") >= STEPS,
          "DataLoader and optimizer ranges in every block (%s)" % q1(db, "SELECT count(*) FROM range WHERE source IN (3, 4)"))
    # GPUSCOPE_TORCH_AB_IDLE=1: the callback stays on in the blocks without ops; the same pattern.
    result, db = record("ab_idle", train_mlp(0, ["--sleep-ms", "0"]),
                        env={"GPUSCOPE_TORCH_AB_STEPS": str(n), "GPUSCOPE_TORCH_AB_IDLE": "1"})
    idle = [q1(db, 'SELECT count(*) FROM op WHERE start >= ? AND "end" <= ?', s, e) > 0
            for _, s, e in q(db, 'SELECT number, start, "end" FROM step ORDER BY number')]
    check(result.returncode == 0 and idle[1:] == want[1:],
          "GPUSCOPE_TORCH_AB_IDLE=1: the same blocks: %s" % "".join("x" if o else "." for o in idle))
    result, db = record("ab_bad", train_mlp(0, ["--steps", "4", "--sleep-ms", "0"]), env={"GPUSCOPE_TORCH_AB_STEPS": "3x"})
    check(result.returncode == 0, "a bad GPUSCOPE_TORCH_AB_STEPS: job exits 0")
    check("GPUSCOPE_TORCH_AB_STEPS=3x is not a step count" in result.stderr, "said on stderr")
    check(q1(db, "SELECT count(*) FROM message WHERE text LIKE '%GPUSCOPE_TORCH_AB_STEPS=3x%'") == 1, "and in the database")
    check(all(q1(db, 'SELECT count(*) FROM op WHERE start >= ? AND "end" <= ?', s, e) > 0
              for _, s, e in q(db, 'SELECT number, start, "end" FROM step WHERE number > 0')),
          "and ignored: ops in every step")


@case
def sampled_by_time():
    # No optimizer steps: the collector's writer thread switches by time while the job's ops
    # run on. Each stretch must end after the plugin stopped recording. 28 of ~150 000 ops began
    # 1-115 us after their stretch's end when the end was stamped from the switch itself rather
    # than from the start of the writer's tick; and an op torch began just before a switch, whose
    # start the plugin stamps after its shapes, once came 0.5 us after the end (now dropped).
    script = ("import time, torch\nx = torch.randn(64, 64)\nt = time.time()\n"
              "while time.time() - t < 3:\n    torch.nn.functional.linear(x, x).relu().sum()\n")
    result, db = record("by_time", [args.python, "-c", script], options=["--sample", "0.1,0.1"])
    check(result.returncode == 0, "job exits 0")
    windows = q(db, 'SELECT start, "end" FROM range WHERE source = 7 ORDER BY start')
    check(len(windows) >= 8, "at least 8 traced stretches (got %d)" % len(windows))
    ops = q1(db, "SELECT count(*) FROM op")
    late = ops_begun_outside(db)
    check(ops > 1000 and late == 0, "%d ops begun inside a traced stretch: %s not" % (ops, late))


@case
def sampled():
    # record --sample ON,OFF: ops (and on a GPU, kernels and API calls) only in
    # traced stretches that switch at step boundaries; steps and ranges always.
    steps = 250
    # torch imported, then 1.5 s before the script starts (a slow start-up, as on the GPU machine):
    # the collector switches by time while it waits for steps, and the plugin must follow.
    sample = os.path.join(TORCH_SAMPLES, "launch_bound.py")
    wrapper = ("import sys, time, runpy, torch; time.sleep(1.5); sys.path.insert(0, %r); sys.argv = [%r] + sys.argv[1:]; "
               "runpy.run_path(%r, run_name='__main__')" % (TORCH_SAMPLES, sample, sample))
    result, db = record("sampled", [args.python, "-c", wrapper, "--device", "cpu", "--steps", str(steps)],
                        options=["--sample", "0.2,0.4"])
    check(result.returncode == 0, "job exits 0")
    numbers = [n for (n,) in q(db, "SELECT number FROM step ORDER BY number")]
    check(numbers == list(range(steps + 2)), "every step recorded, numbered without gaps (got %d)" % len(numbers))
    windows = q(db, "SELECT start, \"end\" FROM range WHERE source = 7 ORDER BY start")
    check(len(windows) >= 2, "at least 2 traced stretches (got %d)" % len(windows))
    check(q1(db, "SELECT value FROM meta WHERE key = 'sample'") == "0.2,0.4", "meta sample = 0.2,0.4")
    inside = "EXISTS (SELECT 1 FROM range r WHERE r.source = 7 AND {0}.start >= r.start AND {0}.\"end\" <= r.\"end\")"
    # An op begun in a stretch is recorded whole: before the first step the collector switches by
    # time, from its writer thread, and an op under way then ends after its stretch (seen under load).
    ops = q1(db, "SELECT count(*) FROM op")
    outside = ops_begun_outside(db)
    check(ops > 0 and outside == 0, "%d ops, all begun inside traced stretches (outside: %s)" % (ops, outside))
    traced = q1(db, "SELECT count(*) FROM step s WHERE " + inside.format("s"))
    check(0 < traced < steps, "some steps traced whole, not all (%d of %d)" % (traced, steps + 2))
    # Switches happen at step boundaries: each stretch starts where a step ends.
    ends = {e for (e,) in q(db, "SELECT \"end\" FROM step")}
    # Once steps come, switches happen at step boundaries: each stretch after the first step starts where one
    # step ends (before that the collector switched by time, and the plugin followed).
    # (The first step can straddle switches by time when it is slow, as under a loaded CI machine:
    # the first boundary is its end.)
    first_boundary = q1(db, "SELECT min(\"end\") FROM step")
    # (The last stretch may start at the last step's end, with no step after it.)
    later = [w0 for w0, _ in windows if w0 > first_boundary]
    gaps = [min(abs(e - w0) for e in ends) for w0 in later]
    check(len(later) >= 1 and all(g < 5_000_000 for g in gaps),
          "each stretch after the first step starts at a step boundary (within 5 ms; %d stretches; gaps ms %s)" %
          (len(later), [round(g / 1e6, 1) for g in gaps]))
    untraced_ops = q1(db, "SELECT count(*) FROM step s WHERE NOT " + inside.format("s") +
                   " AND s.start >= ? AND EXISTS (SELECT 1 FROM op o WHERE o.start >= s.start AND o.\"end\" <= s.\"end\")",
                   first_boundary)
    check(untraced_ops == 0, "untraced steps after the first hold no ops (got %s)" % untraced_ops)
    report = subprocess.run([args.gpuscope, "analyze", db, "--format", "json"], capture_output=True, text=True)
    check(report.returncode == 0, "analyze exits 0")
    summary = json.loads(report.stdout)["summary"] if report.returncode == 0 else {}
    check(summary.get("steps_untraced", 0) > 0 and
          summary.get("steps", 0) + summary.get("warmup_skipped", 0) + summary.get("steps_untraced", 0) ==
          summary.get("steps_recorded"),
          "analyze: traced + warm-up + untraced = recorded steps (%s)" %
          {k: summary.get(k) for k in ("steps", "warmup_skipped", "steps_untraced", "steps_recorded")})
    info = subprocess.run([args.gpuscope, "info", db], capture_output=True, text=True).stdout
    check("stretch(es) (--sample 0.2,0.4)" in info and "torn down" not in info,
          "info shows the traced stretches (no CUPTI here, so no teardown)")
    # On a GPU the collector counts its CUPTI teardowns; info reports them (a copy with the count set).
    torn = db + ".torn.db"
    shutil.copyfile(db, torn)
    with sqlite3.connect(torn) as c:
        c.execute("UPDATE collector_stat SET value = 4 WHERE key = 'cupti_finalizes'")
    info = subprocess.run([args.gpuscope, "info", torn], capture_output=True, text=True).stdout
    check("CUPTI torn down 4 time(s) while untraced" in info, "info reports CUPTI teardowns")
    bad = subprocess.run([args.gpuscope, "record", "--sample", "0.2", "--", "true"], capture_output=True, text=True)
    check(bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "--sample" in bad.stderr,
          "--sample without OFF: one-line error, exit 2 (%r)" % bad.stderr.strip())


@case
def version_mismatch():
    result, db = record("mismatch", train_mlp(0, ["--steps", "2"]),
                        env={"GPUSCOPE_TORCH_PLUGIN": args.mismatch_plugin})
    check(result.returncode == 0, "the job runs on (exit 0, got %d)" % result.returncode)
    check("GPUSCOPE_SAMPLE" in result.stdout, "the job finished")
    said = [l for l in result.stderr.splitlines() if l.startswith("gpuscope:") and "torch" in l and "load" in l]
    check(len(said) == 1 and "built for torch 0.0.1" in said[0], "one line says why: %s" % said)
    check(q1(db, "SELECT count(*) FROM op") == 0, "recorded without the plugin")
    check(q1(db, "SELECT count(*) FROM message WHERE text LIKE '%built for torch 0.0.1%'") == 1,
          "the reason is stored in message")


@case
def cpu_memory():
    result, db = record("memory", train_mlp(0, ["--steps", "3", "--sleep-ms", "0"]),
                        env={"GPUSCOPE_TORCH_CPU_MEMORY": "1"})
    check(result.returncode == 0, "job exits 0")
    rows = q(db, """SELECT op, count(*), min(bytes), max(total_allocated), min(device), max(device)
                    FROM memory_event WHERE source = 2 GROUP BY op ORDER BY op""")
    ops = {r[0]: r for r in rows}
    check(1 in ops and ops[1][1] > 100, "allocations reported by the torch allocator hook: %s" % rows)
    check(2 in ops and ops[2][1] > 100, "frees reported")
    check(all(r[2] > 0 for r in rows), "sizes are positive for both")
    check(all(r[4] == -1 and r[5] == -1 for r in rows), "CPU memory has device -1")
    bad = q1(db, "SELECT count(*) FROM memory_event WHERE source = 2 AND op = 1 AND total_allocated < bytes")
    check(ops.get(1) and ops[1][3] > 0 and bad == 0, "allocated bytes over time include each allocation")


@case
def profiler_steps():
    trace = os.path.join(TMP, "profile.json")
    result, db = record("profiler", train_mlp(0, ["--steps", "3", "--sleep-ms", "0", "--profile", trace]))
    check(result.returncode == 0, "job under torch.profiler exits 0 (got %d)" % result.returncode)
    events = []
    if check(os.path.exists(trace), "torch.profiler still writes its trace"):
        with open(trace) as f:
            doc = json.load(f)
        events = doc if isinstance(doc, list) else doc.get("traceEvents", [])  # torch 1.13 writes a bare list
    # Kineto writes cat "cpu_op"; Debian's torch (no Kineto) the legacy format without cat.
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") in (None, "cpu_op")]
    check(len(ops) > 100, "torch.profiler still records ops (%d)" % len(ops))
    # Steps are the ProfilerStep#N ranges as torch opened them (torch 1.13
    # numbers the first two #0), and the optimizer rule stops once they appear:
    # only the first optimizer step, which ends inside ProfilerStep#0, remains.
    marks = q(db, """SELECT CAST(substr(n.value, 14) AS INTEGER), r.start, r.end FROM range r
                     JOIN string n ON n.id = r.name_id WHERE r.source = 5 ORDER BY r.start""")
    steps = q(db, "SELECT number, start, end FROM step WHERE source = 1 ORDER BY start")
    check(len(marks) >= 3 and steps == marks, "one step per ProfilerStep#N range, same bounds and number: %s" % steps)
    check(q1(db, "SELECT count(*) FROM step WHERE source = 2") <= 1, "optimizer steps stop once ProfilerStep appears")


if __name__ == "__main__":
    fn = CASES.get(args.case)
    if not fn:
        sys.exit("unknown case %s; known: %s" % (args.case, ", ".join(sorted(CASES))))
    try:
        fn()
    finally:
        if not failures:
            shutil.rmtree(TMP, ignore_errors=True)
    if failures:
        print("%d check(s) failed; files kept in %s" % (len(failures), TMP))
        sys.exit(1)
