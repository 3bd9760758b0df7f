"""How a recorded job ended, end to end with Debian's torch on the CPU
(job_end_loop.py: a training loop fed by 2 DataLoader workers):

- stopped_*: the job stopped after a few seconds by SIGINT (to the process
  group as Ctrl-C sends it, or to gpuscope alone) or SIGKILL (to the job, or to
  gpuscope, which takes the job with it): `analyze` covers >= 95 % of the steps
  recorded after record's control stretch, and `info` counts them as traced.
- job_fails: a job that raises is reported as failed (exit code 1) in `info`,
  in `analyze`'s first lines and in its JSON (`summary.job_exit`); one that
  raises before its first step has its findings marked start-up only; one that
  raises before any op has analyze's one error line say the job failed.
- stopped_sigkill_gpuscope also checks the job line and the -wal/-shm left.
- live_recording: check, diff and analyze on a file record still writes.

  check_job_end.py CASE --gpuscope BIN --python PY --samples DIR --trainer BIN --mismatch-plugin SO"""
import os
import signal
import subprocess
import time

from recording_checks import TMP, analyze_json, args, case, check, q, run

LOOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "job_end_loop.py")
RUN_S = 5


def child_of(pid, timeout=10):
    """The job: gpuscope record's child process."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        except OSError:
            pass
        time.sleep(0.05)
    return None


def record_and_stop(name, sig, target):
    """Records job_end_loop.py with record's defaults (control stretch) and
    sends `sig` after RUN_S seconds to `target`: "group" (gpuscope's process
    group, as a terminal's Ctrl-C), "gpuscope" or "job"."""
    db = os.path.join(TMP, name + ".db")
    proc = subprocess.Popen([args.gpuscope, "record", "-o", db, "--", args.python, LOOP],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=TMP,
                            start_new_session=True)
    job = child_of(proc.pid)
    check(job is not None, "%s: the job started" % name)
    # From the loop's "started" line (its model built): on a GPU machine torch and
    # CUDA take several seconds to start, which the stop must not cut short.
    started = proc.stdout.readline()
    check(started.strip() == "started", "%s: the job printed 'started': %r" % (name, started))
    time.sleep(RUN_S)
    if target == "group":
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid if target == "gpuscope" else job, sig)
    try:
        out, err = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        check(False, "%s: gpuscope ended within 90 s of the signal" % name)
        raise SystemExit(1)
    print("gpuscope record exited %d; its stderr ends: %s" % (proc.returncode, err[-400:].replace("\n", " | ")))
    return db


def steps_after_control(db):
    """The steps recorded after the control stretch: those from the first step
    after step 3 whose ops were recorded again (ops are recorded only while
    traced), counted from the step table."""
    rows = q(db, """SELECT s.number, EXISTS(SELECT 1 FROM op o WHERE o.pid = s.pid AND o.start >= s.start
                                             AND o.start < s."end") FROM step s ORDER BY s.start""")
    pattern = "".join("x" if has_ops else "." for _, has_ops in rows)
    resumed = pattern.find(".x", 3)
    check(resumed > 0, "the recording has a control stretch and traced steps after it: %s" % pattern[:40])
    return len(rows) - (resumed + 1) if resumed > 0 else 0, len(rows)


def check_record_killed(name, db):
    """SIGKILL to gpuscope record takes the job with it and leaves nobody to
    write how the job ended or to finalize: the first reader says so and
    checkpoints the -wal and -shm the killed writer left (issue 50)."""
    left = [s for s in ("-wal", "-shm") if os.path.exists(db + s)]
    print("left beside the recording: %s" % left)
    info = subprocess.run([args.gpuscope, "info", db], capture_output=True, text=True)
    check(info.returncode == 0, "%s: info exits 0: %s" % (name, info.stderr[-300:]))
    if left:
        check("were checkpointed into it and removed" in info.stderr,
              "%s: info says it checkpointed the -wal and -shm left: %s" % (name, info.stderr[-300:]))
    check(not any(os.path.exists(db + s) for s in ("-wal", "-shm")), "%s: no -wal or -shm left after info" % name)
    job = [line for line in info.stdout.splitlines()[:8] if line.startswith("job")]
    check(job and "killed with gpuscope record (SIGKILL); recording cut at " in job[0],
          "%s: info has a job line saying record was killed: %s" % (name, job))
    text = subprocess.run([args.gpuscope, "analyze", db], capture_output=True, text=True)
    first = text.stdout.splitlines()[:3]
    check(any(line.startswith("job: FAILED: killed with gpuscope record (SIGKILL); recording cut at ") for line in first),
          "%s: analyze says so in its first lines: %s" % (name, first))


def check_stopped(name, sig, target):
    db = record_and_stop(name, sig, target)
    if not check(os.path.exists(db), "%s: the recording exists" % name):
        return
    if sig == signal.SIGKILL and target == "gpuscope":
        check_record_killed(name, db)
    after, total = steps_after_control(db)
    check(after > 100, "%s: %d of %d steps recorded after the control stretch" % (name, after, total))
    report = analyze_json(db)
    if not report:
        return
    steps = report["summary"]["steps"]
    check(steps >= 0.95 * after,
          "%s: analyze covers >= 95 %% of the %d steps after the control stretch: %d (%d untraced)"
          % (name, after, steps, report["summary"]["steps_untraced"]))
    info = subprocess.run([args.gpuscope, "info", db], capture_output=True, text=True)
    check(info.returncode == 0, "%s: info exits 0" % name)
    traced = next((line for line in info.stdout.splitlines() if line.startswith("traced")), "")
    check("2 stretch" in traced, "%s: info counts two traced stretches: %s" % (name, traced))


@case
def stopped_sigint_group():
    check_stopped("sigint_group", signal.SIGINT, "group")


@case
def stopped_sigint_gpuscope():
    check_stopped("sigint_gpuscope", signal.SIGINT, "gpuscope")


@case
def stopped_sigkill_job():
    check_stopped("sigkill_job", signal.SIGKILL, "job")


@case
def stopped_sigkill_gpuscope():
    check_stopped("sigkill_gpuscope", signal.SIGKILL, "gpuscope")


def check_failed(name, extra, startup_only):
    db = os.path.join(TMP, name + ".db")
    result = subprocess.run([args.gpuscope, "record", "-o", db, "--", args.python, LOOP] + extra,
                            capture_output=True, text=True, cwd=TMP, timeout=90)
    check(result.returncode == 1, "%s: record exits 1 as the job did (got %d)" % (name, result.returncode))
    check(q(db, "SELECT value FROM meta WHERE key = 'job_exit'") == [("exit 1",)], "%s: meta job_exit is 'exit 1'" % name)
    info = subprocess.run([args.gpuscope, "info", db], capture_output=True, text=True)
    job = [line for line in info.stdout.splitlines()[:8] if line.startswith("job")]
    check(job and "FAILED: exit code 1 after" in job[0], "%s: info says the job failed: %s" % (name, job))
    text = subprocess.run([args.gpuscope, "analyze", db], capture_output=True, text=True)
    check(text.returncode == 0, "%s: analyze exits 0: %s" % (name, text.stderr[-300:]))
    first = text.stdout.splitlines()[:3]
    check(any(line.startswith("job: FAILED: exit code 1 after") for line in first),
          "%s: analyze says so in its first lines: %s" % (name, first))
    check(any("start-up only" in line for line in first) == startup_only,
          "%s: findings %s start-up only in the first lines" % (name, "marked" if startup_only else "not marked"))
    report = analyze_json(db)
    job = report.get("summary", {}).get("job_exit") or {}
    check(job.get("failed") is True and job.get("exit_code") == 1 and job.get("signal") is None,
          "%s: summary.job_exit says exit code 1: %s" % (name, job))
    check(job.get("startup_only") is startup_only and (job.get("steps") == 0) == startup_only,
          "%s: summary.job_exit.startup_only is %s: %s" % (name, startup_only, job))
    check(any("start-up only" in n for n in report.get("notes", [])) == startup_only,
          "%s: a note %s the findings start-up only" % (name, "marks" if startup_only else "does not mark"))


def check_failed_before_any_event(name, extra):
    """A job that dies before its first timed event leaves nothing to analyse:
    analyze still exits 2, and its one line says the job failed (issue 50)."""
    db = os.path.join(TMP, name + ".db")
    result = subprocess.run([args.gpuscope, "record", "-o", db, "--", args.python, LOOP] + extra,
                            capture_output=True, text=True, cwd=TMP, timeout=90)
    check(result.returncode == 1, "%s: record exits 1 as the job did (got %d)" % (name, result.returncode))
    text = subprocess.run([args.gpuscope, "analyze", db], capture_output=True, text=True)
    lines = text.stderr.strip().splitlines()
    check(text.returncode == 2 and len(lines) == 1, "%s: analyze exits 2 with one line: %s" % (name, lines))
    check(lines and ": job FAILED: exit code 1 after " in lines[0], "%s: the line says the job failed: %s" % (name, lines))


@case
def job_fails():
    check_failed("raises_after_1s", ["--raise-after", "1"], startup_only=False)
    check_failed("raises_before_a_step", ["--raise-at-start", "1"], startup_only=True)
    check_failed_before_any_event("raises_before_any_op", ["--raise-at-import"])


@case
def live_recording():
    """check, diff and analyze while record still writes the file (issue 50):
    check and diff say so in one line and --wait waits for the job's end;
    analyze does not take the open traced stretch for a killed job's."""
    db = os.path.join(TMP, "live.db")
    budget = os.path.join(TMP, "budget.json")
    with open(budget, "w") as f:
        f.write('{"max_step_ms_median": 10000}')
    proc = subprocess.Popen([args.gpuscope, "record", "-o", db, "--", args.python, LOOP],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=TMP,
                            start_new_session=True)
    try:
        started = proc.stdout.readline()
        check(started.strip() == "started", "the job printed 'started': %r" % started)
        time.sleep(RUN_S)  # past record's control stretch: a traced stretch is open
        for command in (["check", db, "--budget", budget], ["diff", db, db]):
            out = subprocess.run([args.gpuscope] + command, capture_output=True, text=True)
            said = [line for line in out.stderr.splitlines() if "is still being recorded" in line]
            check(len(said) == 1 and "--wait waits until the job ends" in said[0],
                  "%s on a live file says so in one line: %s" % (command[0], out.stderr[-400:]))
        text = subprocess.run([args.gpuscope, "analyze", db], capture_output=True, text=True)
        check(text.returncode == 0, "analyze of the live file exits 0: %s" % text.stderr[-300:])
        check("killed inside a traced stretch" not in text.stdout,
              "analyze does not say the live job was killed: %s"
              % [line for line in text.stdout.splitlines() if "killed" in line])
        check("the recording is still being written" in text.stdout, "analyze says the file is still being written")
        waiting = subprocess.Popen([args.gpuscope, "check", "--wait", db, "--budget", budget],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1)
        check(waiting.poll() is None, "check --wait waits while the job runs")
        os.killpg(proc.pid, signal.SIGINT)
        proc.communicate(timeout=90)
        out, err = waiting.communicate(timeout=90)
        check("waiting for %s to be finished" % db in err, "check --wait said it waits: %s" % err[-300:])
        check(waiting.returncode == 0 and "is still being recorded" not in err,
              "check --wait reads the finished file (exit %d): %s" % (waiting.returncode, out[-300:]))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


if __name__ == "__main__":
    run()
