#!/usr/bin/env python3
"""Records one sample under `gpuscope record` with the torch plugin and checks
the database with SQL, for jobs of one process (and its DataLoader workers).
One case per CTest test; the shared machinery is recording_checks.py:

  check_recording.py CASE --gpuscope BIN --python PY --samples DIR --trainer BIN --mismatch-plugin SO"""
import json
import os
import shutil
import sqlite3
import statistics
import subprocess

from recording_checks import (BATCH, SLEEP_MS, STEPS, TMP, TORCH_SAMPLES, SleepProbe, analyze_json, args, case,
                              check, common_training_checks, op_rows, ops_begun_outside, q, q1, record, run,
                              sample_result, train_mlp)


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
    # The fetch's own ops (the Dataset's indexing, the collate's stack) are left out by default.
    check(ops_inside_fetches(db) == [], "no op inside a DataLoader fetch: %s" % ops_inside_fetches(db)[:5])


def ops_inside_fetches(db):
    """(name, count) of the ops that ran on the training thread inside a DataLoader range."""
    return q(db, """SELECT n.value, count(*) FROM op o JOIN string n ON n.id = o.name_id
                    JOIN range r ON r.source = 3 AND r.pid = o.pid AND r.tid = o.tid
                                AND o.start >= r.start AND o.start < r."end"
                    GROUP BY n.value ORDER BY count(*) DESC""")


@case
def dataloader_ops():
    # GPUSCOPE_TORCH_DATALOADER_OPS=1: the fetch's ops are recorded too, the rest is as by default.
    result, db = record("dataloader_ops", train_mlp(0, ["--sleep-ms", "0"]), env={"GPUSCOPE_TORCH_DATALOADER_OPS": "1"})
    check(result.returncode == 0, "job exits 0 (got %d)" % result.returncode)
    inside = dict(ops_inside_fetches(db))
    check(inside.get("aten::stack", 0) >= 2 * STEPS and sum(inside.values()) >= STEPS * BATCH,
          "the collate's stacks and the per-sample indexing inside the fetches: %s" % sorted(inside.items())[:8])
    check(len(op_rows(db, "aten::linear")) == 4 * STEPS, "training ops as by default")
    loader = q(db, "SELECT count(*) FROM range WHERE source = 3")
    check(loader == [(STEPS,)], "one DataLoader range per step: %s" % loader)


@case
def dataloader_workers2():
    result, db = record("workers2", train_mlp(2), timeout=60)
    check(result.returncode == 0, "train_mlp.py --workers 2 (fork) exits 0 without hang (got %d)" % result.returncode)
    common_training_checks(db, "_MultiProcessingDataLoaderIter.__next__")
    check(q1(db, "SELECT count(*) FROM process") == 1, "forked workers do not record")
    check(len(op_rows(db, "aten::addmm")) == 4 * STEPS, "the trainer's ops are all there")


@case
def control_stretch():
    # record's default: after 3 warm-up steps, once two steps in a row agree within 25 %, 8
    # steps untraced (ops off), at least 0.2 s, then traced again; every step recorded;
    # analyze reports the untraced step time and what tracing cost.
    result, db = record("control", train_mlp(0, ["--steps", "30", "--sleep-ms", "1"]), control=True,
                        env={"GPUSCOPE_TORCH_CPU_MEMORY": "1"})
    check(result.returncode == 0, "job exits 0 (got %d)" % result.returncode)
    steps = q(db, "SELECT number, start, \"end\" FROM step ORDER BY start")
    check(len(steps) == 30, "every step recorded (%d)" % len(steps))
    windows = q(db, "SELECT start, \"end\" FROM range WHERE source = 7 ORDER BY start")
    check(len(windows) == 2, "two traced stretches, before and after the control stretch: %d" % len(windows))
    with_ops = [q1(db, "SELECT count(*) FROM op WHERE start >= ? AND start < ?", s, e) > 0 for _, s, e in steps]
    pattern = "".join("x" if o else "." for o in with_ops)
    first = pattern.find(".")
    untraced = pattern[first:].split("x")[0] if first >= 0 else ""
    check(pattern.startswith("xxx") and len(untraced) >= 8 and pattern.endswith("xxxx"),
          "ops in 3 or more warm-up steps, none in 8 or more after them, then ops again: %s" % pattern)
    if 3 <= first < 3 + 50:
        a, b = [(e - s) / 1e6 for _, s, e in steps[first - 2:first]]
        check(max(a, b) <= 1.35 * min(a, b),
              "the stretch began once two steps agreed (%.1f and %.1f ms before it)" % (a, b))
    # The allocator's events: the first 2 steps of each traced stretch only (GPUSCOPE_TORCH_MEMORY_STEPS).
    with_memory = [q1(db, "SELECT count(*) FROM memory_event WHERE source = 2 AND ts >= ? AND ts < ?", s, e) > 0
                   for _, s, e in steps]
    memory = "".join("m" if m else "." for m in with_memory)
    resumed = pattern.index("x", max(first, 3))
    check(memory[:2] == "mm" and memory[2:resumed] == "." * (resumed - 2)
          and memory[resumed:resumed + 2] == "mm" and set(memory[resumed + 2:]) == {"."},
          "allocator events in the first 2 steps of each stretch only: %s (ops %s)" % (memory, pattern))
    out = subprocess.run([args.gpuscope, "analyze", db, "--format", "json"], capture_output=True, text=True)
    check(out.returncode == 0, "analyze exits 0: %s" % out.stderr[-300:])
    if out.returncode == 0:
        untraced = json.loads(out.stdout)["summary"]["untraced"]
        durations = [(e - s) / 1e6 for (_, s, e), o in zip(steps, with_ops)]
        quiet_ms = statistics.median(d for d, o in zip(durations[3:], with_ops[3:]) if not o)
        traced_ms = statistics.median(d for d, o in zip(durations[3:], with_ops[3:]) if o)
        if untraced["step_ms"] is not None:
            # No CUPTI here, so no drain: the untraced steps' CPU bounds stand in.
            check(untraced["method"] == "cpu_steps" and untraced["step_ms"] > 0
                  and untraced["tracing_cost_pct"] is not None and "rejected_step_ms" not in untraced,
                  "the report has the untraced step and the tracing cost: %s" % untraced)
        else:
            # A loaded machine can make the untraced steps the slow ones; then the analyzer must
            # refuse them (docs/rules.md, "The untraced job"), and the steps must show why.
            rejected = untraced.get("rejected_step_ms") or 0
            check(rejected > 1.08 * untraced["traced_step_ms"] and quiet_ms > traced_ms
                  and "slower than the traced step" in (untraced["unknown_why"] or ""),
                  "an untraced step slower than the traced one (steps: %.2f ms untraced, %.2f ms traced) "
                  "is refused with its time and why: %s" % (quiet_ms, traced_ms, untraced))
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


# Loops without torch.optim under record's default control stretch (issue 50):
# a hand-written update (steps from backward passes) and an inference loop with
# no backward at all that marks its steps with gpuscope.step(). Each iteration
# sleeps 10 ms, so the control stretch (3 warm-up steps, then 8 steps and at
# least 0.2 s untraced) ends near iteration 23 and the job runs on traced.
NO_OPTIMIZER_ITERATIONS = 60
HAND_WRITTEN_UPDATE = """
import time
import torch
torch.manual_seed(0)
w1 = torch.randn(32, 64, requires_grad=True)
w2 = torch.randn(64, 1, requires_grad=True)
for step in range(%d):
    x = torch.randn(16, 32)
    ((x @ w1).relu() @ w2).square().mean().backward()
    with torch.no_grad():
        for p in (w1, w2):
            p -= 0.01 * p.grad
            p.grad = None
    time.sleep(0.01)
""" % NO_OPTIMIZER_ITERATIONS
STEP_CALLS_ONLY = """
import sys
import time
import torch
sys.path.insert(0, %r)
import gpuscope
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
with torch.no_grad():
    for step in range(%d):
        gpuscope.step()
        model(torch.randn(16, 32)).softmax(-1)
        time.sleep(0.01)
    gpuscope.step()
""" % (os.path.join(args.samples, "..", "python"), NO_OPTIMIZER_ITERATIONS)


@case
def no_optimizer():
    for name, script, source in (("hand_written_update", HAND_WRITTEN_UPDATE, 2), ("step_calls_only", STEP_CALLS_ONLY, 1)):
        path = os.path.join(TMP, name + ".py")
        with open(path, "w") as f:
            f.write(script)
        result, db = record(name, [args.python, path], control=True)
        check(result.returncode == 0, "%s: job exits 0 (got %d)" % (name, result.returncode))
        steps = q(db, "SELECT number, source FROM step ORDER BY start")
        check(len(steps) == NO_OPTIMIZER_ITERATIONS,
              "%s: every iteration is a step under record's default: %d of %d" % (name, len(steps), NO_OPTIMIZER_ITERATIONS))
        check({s for _, s in steps} == {source}, "%s: steps of source %d: %s" % (name, source, sorted({s for _, s in steps})))
        windows = q1(db, "SELECT count(*) FROM range WHERE source = 7")
        check(windows == 2, "%s: traced before and after the control stretch: %d stretches" % (name, windows))
        pattern = ops_per_step(db)
        # A step from a backward pass ends only when the next pass begins, so its
        # forward ops fall on the traced side of the switch: "xxxx." is fine too.
        check(pattern.startswith("xxx") and "." * 8 in pattern and pattern.endswith("x" * 30),
              "%s: untraced in the control stretch, traced again after it: %s" % (name, pattern))
        report = analyze_json(db)
        if report:
            summary = report["summary"]
            check(summary["steps"] >= 30 and summary["steps_untraced"] >= 8,
                  "%s: analyze has the traced steps after the control stretch: %d analysed, %d untraced"
                  % (name, summary["steps"], summary["steps_untraced"]))


@case
def trace_without_torch():
    result, db = record("notorch", train_mlp(0, ["--steps", "2"]), trace="cuda,nvtx")
    check(result.returncode == 0, "job exits 0")
    check(q1(db, "SELECT count(*) FROM op") == 0, "--trace without torch: no ops")
    check(q1(db, "SELECT count(*) FROM meta WHERE key = 'torch_version'") == 0, "--trace without torch: plugin not loaded")


@case
def ops_off():
    # GPUSCOPE_TORCH_OPS=0 (overhead measurements): ops and the op callback go
    # (torch calls no callback for ops), ranges and steps stay.
    result, db = record("opsoff", train_mlp(0, ["--steps", "4", "--sleep-ms", "0"]),
                        env={"GPUSCOPE_TORCH_OPS": "0"})
    check(result.returncode == 0, "job exits 0")
    check(q1(db, "SELECT count(*) FROM op") == 0, "GPUSCOPE_TORCH_OPS=0: no ops")
    check(q1(db, "SELECT count(*) FROM step") == 4, "4 steps still found (got %s)" % q1(db, "SELECT count(*) FROM step"))
    check(q1(db, "SELECT count(*) FROM meta WHERE key = 'torch_version'") == 1, "the plugin was loaded")
    check(q1(db, "SELECT value FROM meta WHERE key = 'torch_op_callback'") == "none",
          "no op callback registered (meta torch_op_callback: %s)" % q1(db, "SELECT value FROM meta WHERE key = 'torch_op_callback'"))


def ops_per_step(db):
    """'x' for each step (in order) holding ops, '.' for one without."""
    steps = q(db, 'SELECT start, "end" FROM step ORDER BY start')
    return "".join("x" if q1(db, "SELECT count(*) FROM op WHERE start >= ? AND start < ?", s, e) else "." for s, e in steps)


# A loop whose batch size changes every step: the same ops, other shapes.
VARIABLE_BATCH = """
import torch
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(20):
    x = torch.randn(8 + step % 3, 32)
    opt.zero_grad()
    model(x).square().mean().backward()
    opt.step()
"""


@case
def op_steps():
    # GPUSCOPE_TORCH_OP_STEPS=2/5: ops in steps 0,1, 5,6, 10,11, 15,16 only
    # (record gives the CUDA jobs' other steps theirs by position, tested in
    # place_ops_test.cpp; this CPU job has no CUDA calls to place them by).
    result, db = record("op_steps", train_mlp(0, ["--sleep-ms", "0"]), env={"GPUSCOPE_TORCH_OP_STEPS": "2/5"})
    check(result.returncode == 0, "job exits 0 (got %d)" % result.returncode)
    pattern = ops_per_step(db)
    check(pattern == "xx..." * 4, "ops in the first 2 steps of every 5: %s" % pattern)
    check(q1(db, "SELECT value FROM meta WHERE key = 'torch_op_steps'") == "2/5", "meta torch_op_steps is 2/5")
    check(len(q(db, "SELECT 1 FROM step")) == STEPS, "every step still found")
    # Shapes that change from step to step: two recorded steps differ, so ops are
    # recorded in every step from there on (the run's first window is warm-up, not compared).
    script = os.path.join(TMP, "variable_batch.py")
    with open(script, "w") as f:
        f.write(VARIABLE_BATCH)
    result, db = record("op_steps_variable", [args.python, script], env={"GPUSCOPE_TORCH_OP_STEPS": "2/5"})
    check(result.returncode == 0, "variable-batch job exits 0 (got %d)" % result.returncode)
    pattern = ops_per_step(db)
    check(pattern == "xx...xx" + "x" * 13, "ops in every step once steps 5 and 6 differ: %s" % pattern)
    check("shapes change from step to step" in result.stderr, "and stderr says why")
    check(q1(db, "SELECT value FROM meta WHERE key = 'torch_op_steps_changed'") == "0", "meta torch_op_steps_changed is 0")
    # A value that is not N or N/M: said, and ops in every step.
    result, db = record("op_steps_bad", train_mlp(0, ["--sleep-ms", "0", "--steps", "4"]),
                        env={"GPUSCOPE_TORCH_OP_STEPS": "5/2"})
    check(result.returncode == 0, "job with a bad GPUSCOPE_TORCH_OP_STEPS exits 0")
    check("GPUSCOPE_TORCH_OP_STEPS=5/2 is not N or N/M" in result.stderr, "the bad value is named on stderr")
    check(ops_per_step(db) == "xxxx", "ops in every step: %s" % ops_per_step(db))


def ab_shim(n, extra=(), idle=False):
    """train_mlp.py run by bench/torch_plugin/ab_shim.py: ops paused in alternate blocks of n steps."""
    mlp = train_mlp(0, ["--sleep-ms", "0"] + list(extra))
    shim = os.path.join(args.samples, "..", "bench", "torch_plugin", "ab_shim.py")
    return [mlp[0], shim, "--block", str(n)] + (["--idle"] if idle else []) + mlp[1:]


@case
def ab_blocks():
    # bench/torch_plugin/ab_shim.py --block N (ab_steps.py): ops in alternate blocks of N
    # steps; steps and ranges in all of them. The switch comes at a step's end, so step k
    # (counted from 0) has ops when k // N is even.
    n = 3
    result, db = record("ab", ab_shim(n))
    check(result.returncode == 0, "job exits 0")
    steps = q(db, 'SELECT number, start, "end" FROM step ORDER BY number')
    check(len(steps) == STEPS, "%d steps found (got %d)" % (STEPS, len(steps)))
    with_ops = [q1(db, 'SELECT count(*) FROM op WHERE start >= ? AND "end" <= ?', s, e) > 0 for _, s, e in steps]
    # Step 0 starts at the job's first activity, before the plugin may have loaded: not checked.
    want = [(k // n) % 2 == 0 for k in range(len(steps))]
    check(with_ops[1:] == want[1:], "ops in alternate blocks of %d steps: %s" % (n, "".join("x" if o else "." for o in with_ops)))
    check(q1(db, "SELECT count(*) FROM range WHERE source IN (3, 4)") >= STEPS,
          "DataLoader and optimizer ranges in every block (%s)" % q1(db, "SELECT count(*) FROM range WHERE source IN (3, 4)"))
    # --idle: the callback stays on in the blocks without ops; the same pattern.
    result, db = record("ab_idle", ab_shim(n, idle=True))
    idle = [q1(db, 'SELECT count(*) FROM op WHERE start >= ? AND "end" <= ?', s, e) > 0
            for _, s, e in q(db, 'SELECT number, start, "end" FROM step ORDER BY number')]
    check(result.returncode == 0 and idle[1:] == want[1:],
          "ab_shim.py --idle: the same blocks: %s" % "".join("x" if o else "." for o in idle))
    # Without the plugin there is nothing to pause: the shim says so and fails.
    result, db = record("ab_noplugin", ab_shim(n, ["--steps", "4"]), trace="cuda,nvtx")
    check(result.returncode != 0 and "the torch plugin is not loaded" in result.stderr,
          "without the plugin the shim fails with one line (rc %d)" % result.returncode)


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
def steps_window():
    # record --steps 4-7: ops only in the steps numbered 4 to 7 (on a GPU, kernels and API
    # calls too); steps and ranges always; one traced stretch.
    result, db = record("steps_window", train_mlp(0, ["--steps", "12", "--sleep-ms", "0"]), options=["--steps", "4-7"])
    check(result.returncode == 0, "job exits 0 (got %d)" % result.returncode)
    steps = q(db, "SELECT number, start, \"end\" FROM step ORDER BY number")
    check([n for n, _, _ in steps] == list(range(len(steps))) and len(steps) >= 12,
          "every step recorded, numbered from 0 (%d)" % len(steps))
    pattern = "".join("x" if q1(db, "SELECT count(*) FROM op WHERE start >= ? AND start < ?", s, e) else "."
                      for _, s, e in steps)
    want = "".join("x" if 4 <= n <= 7 else "." for n, _, _ in steps)
    check(pattern == want, "ops in steps 4-7 only: %s (want %s)" % (pattern, want))
    check(q1(db, "SELECT count(*) FROM range WHERE source = 7") == 1, "one traced stretch")
    check(q1(db, "SELECT value FROM meta WHERE key = 'trace_steps'") == "4-7", "meta trace_steps = 4-7")
    out = subprocess.run([args.gpuscope, "analyze", db, "--format", "json"], capture_output=True, text=True)
    check(out.returncode == 0, "analyze exits 0: %s" % out.stderr[-300:])
    if out.returncode == 0:
        s = json.loads(out.stdout)["summary"]
        check(4 <= s["first_step"] and s["last_step"] <= 7, "analyze keeps to the traced steps: %s-%s"
              % (s["first_step"], s["last_step"]))
    # --steps 8-: from step 8 to the end; analyze leaves out the first traced step and says why.
    result, db = record("steps_window_open", train_mlp(0, ["--steps", "12", "--sleep-ms", "0"]), options=["--steps", "8-"])
    check(result.returncode == 0, "--steps 8-: job exits 0 (got %d)" % result.returncode)
    steps = q(db, "SELECT number, start, \"end\" FROM step ORDER BY number")
    pattern = "".join("x" if q1(db, "SELECT count(*) FROM op WHERE start >= ? AND start < ?", s, e) else "."
                      for _, s, e in steps)
    check(pattern == "." * 8 + "x" * (len(steps) - 8), "--steps 8-: ops from step 8 on: %s" % pattern)
    out = subprocess.run([args.gpuscope, "analyze", db], capture_output=True, text=True)
    check(out.returncode == 0 and "skipped the first traced step after the untraced ones" in out.stdout,
          "--steps 8-: analyze skips the first traced step and says so: %s" % (out.stdout + out.stderr)[-400:])


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
    run()
