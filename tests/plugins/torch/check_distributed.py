#!/usr/bin/env python3
"""torchrun jobs (gloo on the CPU) recorded under `gpuscope record` and checked
with SQL and `gpuscope analyze`: every rank in one file, sampled tracing across
ranks, the straggler and collective-wait findings, two nodes merged. One case
per CTest test; the shared machinery is recording_checks.py:

  check_distributed.py CASE --gpuscope BIN --python PY --samples DIR --trainer BIN --mismatch-plugin SO"""
import os
import subprocess
import sys
import time

from recording_checks import (TMP, TORCH_SAMPLES, analyze_json, args, case, check, metric, ops_begun_outside,
                              q, q1, record, record_torchrun, run)


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
    # machine of two cores is given more: one CI run, with a median residual of 800 us over its
    # collectives, was 228.5 us off. A wrong alignment is off by a step or more (tens of ms).
    check(abs(error_us) <= 500, "merge finds the offset between the nodes' clocks (%.3f s) to %.1f us"
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


if __name__ == "__main__":
    run()
