"""What the torch recording checks share: the command line, recording a job
under `gpuscope record`, SQL on the result, one printed line per check, and
run(), which runs the case named on the command line. The cases are in
check_recording.py (one process) and check_distributed.py (torchrun jobs):

  check_recording.py CASE --gpuscope BIN --python PY --samples DIR --trainer BIN --mismatch-plugin SO

Prints one line per check and exits 1 on any failure."""
import argparse
import bisect
import json
import os
import shutil
import sqlite3
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
    the job's, so the run is repeated, at most twice (a fresh-clone CI run lost it
    twice in a row once), and that is said."""
    result, db = record(name, command, **kw)
    for _ in range(2):
        if result.returncode == 0 or "RendezvousConnectionError" not in result.stderr:
            break
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


def analyze_json(db, *options):
    out = subprocess.run([args.gpuscope, "analyze", db, "--format", "json"] + list(options), capture_output=True, text=True)
    check(out.returncode == 0, "analyze %s exits 0: %s" % (" ".join(options), out.stderr[-300:]))
    return json.loads(out.stdout) if out.returncode == 0 else {}


def metric(finding, name):
    return next((m["value"] for m in finding["evidence"]["metrics"] if m["name"] == name), None)


def run():
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
