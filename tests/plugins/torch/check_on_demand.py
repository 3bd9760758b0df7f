#!/usr/bin/env python3
"""Captures on demand (docs/on-demand.md) with Debian's torch on the CPU: a
training loop started by `gpuscope record --on-demand`, captured by `gpuscope
trigger` (twice, each its own file with exactly the steps asked for and their
ops), every rank of a torchrun job in one file over the same steps (--job), a
planted slow step captured by `--when slow-step` once within the cooldown, a
job killed during a capture, and the refusals (another user, a process without
the collector, a dead pid, bad arguments), each one line and exit 2.

  check_on_demand.py CASE --gpuscope BIN --python PY --samples DIR --trainer BIN --mismatch-plugin SO"""
import os
import re
import signal
import subprocess
import sys
import threading
import time

from recording_checks import TMP, analyze_json, args, case, check, q, q1, run, ops_begun_outside

LOOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "on_demand_loop.py")


def gpuscope(*argv, timeout=120, **kw):
    return subprocess.run([args.gpuscope] + list(argv), capture_output=True, text=True, timeout=timeout, cwd=TMP, **kw)


class Job:
    """`gpuscope record --on-demand -- COMMAND`, run in the background until stop()."""

    def __init__(self, name, command, torchrun=False):
        self.stop_file = os.path.join(TMP, name + ".stop")
        self.slow_file = os.path.join(TMP, name + ".slow")
        self.pause_file = os.path.join(TMP, name + ".pause")
        loop = [LOOP, "--stop-file", self.stop_file, "--slow-file", self.slow_file, "--pause-file",
                self.pause_file] + list(command)
        if torchrun:
            # --redirects/--tee 1: Debian's torch 1.13 under Python 3.11 cannot parse the default "0".
            loop = ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "--redirects", "1",
                    "--tee", "1"] + loop
        self.log = open(os.path.join(TMP, name + ".log"), "w")
        self.record = subprocess.Popen([args.gpuscope, "record", "--on-demand", "--", args.python] + loop,
                                       stdout=self.log, stderr=subprocess.STDOUT, cwd=TMP)
        self.pid = None
        for _ in range(200):
            children = self._children(self.record.pid)
            if children:
                self.pid = children[0]
                break
            time.sleep(0.05)

    @staticmethod
    def _children(pid):
        try:
            with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                return [int(c) for c in f.read().split()]
        except OSError:
            return []

    def stop(self, timeout=90):
        open(self.stop_file, "w").close()
        try:
            self.record.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.record.kill()
            self.record.wait()
            check(False, "the job ended within %d s of its stop file" % timeout)
        self.log.close()
        return self.record.returncode

    def output(self):
        with open(self.log.name) as f:
            return f.read()


def ps_rows():
    out = gpuscope("ps")
    rows = {}
    for line in out.stdout.splitlines()[1:]:
        cols = line.split(None, 5)
        if len(cols) == 6 and cols[0].isdigit():
            rows[int(cols[0])] = {"rank": cols[1], "steps": int(cols[2]), "state": cols[3],
                                  "captures": int(cols[4]), "cmd": cols[5]}
    return rows


def wait_for(pred, what, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.2)
    check(False, what + " (within %d s)" % timeout)
    return None


def wait_steps(pids, steps, timeout=60):
    return wait_for(lambda: all(ps_rows().get(p, {}).get("steps", 0) >= steps for p in pids),
                    "gpuscope ps lists %s with at least %d steps" % (pids, steps), timeout)


def traced_steps(db, pid=None):
    """Per process: the numbers of the steps wholly inside a traced stretch, and of the others."""
    sql = """SELECT s.pid, s.number, EXISTS(SELECT 1 FROM range w WHERE w.source = 7 AND w.pid = s.pid
                                              AND w.start <= s.start AND w."end" >= s."end")
             FROM step s ORDER BY s.pid, s.number"""
    out = {}
    for p, number, inside in q(db, sql):
        traced, untraced = out.setdefault(p, ([], []))
        (traced if inside else untraced).append(number)
    return out if pid is None else out.get(pid, ([], []))


def ops_per_step(db, pid):
    return [c for (c,) in q(db, """SELECT (SELECT count(*) FROM op o WHERE o.pid = s.pid AND o.start >= s.start
                                           AND o.start < s."end") FROM step s
                                    JOIN range w ON w.source = 7 AND w.pid = s.pid AND w.start <= s.start
                                                    AND w."end" >= s."end"
                                    WHERE s.pid = ? ORDER BY s.number""", pid)]


def check_capture(db, pid, steps, control, name):
    info = gpuscope("info", db)
    check(info.returncode == 0, "%s: gpuscope info opens it: %s" % (name, info.stderr.strip()[-200:]))
    traced, untraced = traced_steps(db, pid)
    check(len(traced) == steps, "%s: exactly %d traced steps (got %s)" % (name, steps, traced))
    check(traced == list(range(traced[0], traced[0] + len(traced))) if traced else False,
          "%s: the traced steps follow each other" % name)
    if control is not None:
        check(len(untraced) == control and (not untraced or max(untraced) < min(traced or [0])),
              "%s: %d untraced control steps before them (got %s)" % (name, control, untraced))
    ops = ops_per_step(db, pid)
    check(len(ops) == steps and all(c > 0 for c in ops), "%s: every traced step has its ops: %s" % (name, ops))
    check(q1(db, "SELECT count(*) FROM op WHERE pid = ?", pid) == sum(ops), "%s: no op outside the traced steps" % name)
    check(ops_begun_outside(db) == 0, "%s: every op begins inside a traced stretch" % name)
    return traced


@case
def on_demand_trigger():
    job = Job("loop", ["--step-ms", "20"])
    check(job.pid is not None, "record --on-demand started the job (pid %s)" % job.pid)
    wait_steps([job.pid], 10)
    row = ps_rows().get(job.pid, {})
    check(row.get("state") == "dormant" and row.get("captures") == 0 and "on_demand_loop.py" in row.get("cmd", ""),
          "gpuscope ps lists the job dormant, no capture yet, with its command: %s" % row)
    check(not [f for f in os.listdir(TMP) if f.endswith(".db")], "a dormant job writes no file")
    first = gpuscope("trigger", str(job.pid), "--steps", "5", "--control", "2", "-o", "first.db")
    check(first.returncode == 0, "trigger --steps 5 exits 0: %s" % first.stderr.strip()[-400:])
    db1 = os.path.join(TMP, "first.db")
    t1 = check_capture(db1, job.pid, 5, 2, "first capture")
    check(q1(db1, "SELECT value FROM meta WHERE key = 'source'") == "gpuscope trigger" and
          q1(db1, "SELECT value FROM meta WHERE key = 'capture_trigger'") == "gpuscope trigger",
          "its meta says gpuscope trigger made it")
    # The default control stretch (the job's: 8 steps, at least 200 ms), the default 20 steps.
    second = gpuscope("trigger", str(job.pid), "-o", "second.db")
    check(second.returncode == 0, "trigger with the defaults exits 0: %s" % second.stderr.strip()[-400:])
    db2 = os.path.join(TMP, "second.db")
    t2 = check_capture(db2, job.pid, 20, None, "second capture")
    control = q(db2, """SELECT count(*), sum(s."end" - s.start) FROM step s WHERE s.pid = ? AND NOT EXISTS
                        (SELECT 1 FROM range w WHERE w.source = 7 AND w.start <= s.start AND w."end" >= s."end")""",
                job.pid)[0]
    check(control[0] >= 8 and control[1] >= 200e6,
          "second capture: the job's default control stretch, 8 steps and at least 200 ms, untraced (%d steps, %.0f ms)"
          % (control[0], (control[1] or 0) / 1e6))
    untraced = analyze_json(db2).get("summary", {}).get("untraced", {})
    check(untraced.get("method") == "cpu_steps" and (untraced.get("step_ms") or 0) > 0,
          "analyze takes the job's untraced step from the capture's control stretch: %s ms (%s)" %
          (untraced.get("step_ms"), untraced.get("method")))
    check(t1 and t2 and t2[0] > t1[-1], "the second capture's steps come after the first's (%s, %s)" %
          (t1[:1], t2[:1]))
    row = ps_rows().get(job.pid, {})
    check(row.get("state") == "dormant" and row.get("captures") == 2, "dormant again after two captures: %s" % row)
    taken = gpuscope("trigger", str(job.pid), "--steps", "2", "-o", "second.db")
    check(taken.returncode == 2 and "second.db" in taken.stderr and len(taken.stderr.strip().splitlines()) == 1,
          "an output that exists is refused in one line, exit 2: %s" % taken.stderr.strip())
    # A trigger given up (Ctrl-C) before the capture began, while no step ended: the capture is
    # abandoned, its empty file removed, and the job can be triggered again.
    open(job.pause_file, "w").close()
    time.sleep(0.3)
    waiting = subprocess.Popen([args.gpuscope, "trigger", str(job.pid), "--steps", "3", "-o", "given_up.db"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=TMP)
    wait_for(lambda: ps_rows().get(job.pid, {}).get("state") == "waiting", "the capture waits for the next step")
    waiting.send_signal(signal.SIGINT)
    waiting.wait(timeout=30)
    wait_for(lambda: ps_rows().get(job.pid, {}).get("state") == "dormant", "dormant again once its trigger left")
    check(not os.path.exists(os.path.join(TMP, "given_up.db")), "the abandoned capture's file is removed")
    os.remove(job.pause_file)
    third = gpuscope("trigger", str(job.pid), "--steps", "2", "--control", "0", "-o", "third.db")
    check(third.returncode == 0, "the job is triggered again after that: %s" % third.stderr.strip()[-300:])
    code = job.stop()
    check(code == 0, "the job exits 0 (got %d)" % code)
    check("on_demand_loop:" in job.output(), "the job's own output passes through")


def _capture_ended(job, name, err):
    """After a capture ended early: dormant again, its file readable with some traced steps, and a
    later trigger accepted."""
    wait_for(lambda: ps_rows().get(job.pid, {}).get("state") == "dormant", "%s: the job is dormant again" % name)
    db = os.path.join(TMP, name + ".db")
    traced = traced_steps(db, job.pid)[0] if os.path.exists(db) else []
    check(len(traced) >= 2, "%s: the file holds the steps traced until then (%s)" % (name, traced))
    steps_then = ps_rows().get(job.pid, {}).get("steps", 0)
    time.sleep(1)
    check(ps_rows().get(job.pid, {}).get("steps", 0) > steps_then, "%s: the job runs on" % name)
    again = gpuscope("trigger", str(job.pid), "--steps", "2", "--control", "0", "-o", name + "_again.db")
    check(again.returncode == 0, "%s: a later trigger works: %s" % (name, again.stderr.strip()[-300:]))
    return traced


@case
def on_demand_interrupted():
    """Issue 50, item 8: Ctrl-C on `trigger --steps 100000` ends the capture there and says so."""
    job = Job("loop", ["--step-ms", "20"])
    wait_steps([job.pid], 5)
    trigger = subprocess.Popen([args.gpuscope, "trigger", str(job.pid), "--steps", "100000", "--control", "1", "-o",
                                "interrupted.db"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=TMP)
    wait_for(lambda: ps_rows().get(job.pid, {}).get("state") == "tracing", "the capture is tracing")
    time.sleep(1.0)
    trigger.send_signal(signal.SIGINT)
    out, err = trigger.communicate(timeout=60)
    check(trigger.returncode == 128 + signal.SIGINT, "trigger exits 130 after Ctrl-C (got %d)" % trigger.returncode)
    check("interrupted" in err and "traced of the 100000 steps asked for" in err,
          "trigger says the capture was interrupted and what it holds: %s" % err.strip()[-400:])
    traced = _capture_ended(job, "interrupted", err)
    check(("steps %d-" % traced[0]) in err if traced else False,
          "trigger names the steps traced: %s" % err.strip()[-300:])
    info = gpuscope("info", os.path.join(TMP, "interrupted.db"))
    check(info.returncode == 0, "gpuscope info reads the interrupted capture: %s" % info.stderr.strip()[-200:])
    # A trigger killed outright (no chance to say so): the job ends the capture and finalizes it itself.
    killed = subprocess.Popen([args.gpuscope, "trigger", str(job.pid), "--steps", "100000", "--control", "0", "-o",
                               "killed_trigger.db"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=TMP)
    wait_for(lambda: ps_rows().get(job.pid, {}).get("state") == "tracing", "the second capture is tracing")
    time.sleep(0.5)
    killed.kill()
    killed.wait(timeout=30)
    _capture_ended(job, "killed_trigger", "")
    check(q1(os.path.join(TMP, "killed_trigger.db"), "SELECT count(*) FROM step") > 0,
          "the job finalized the capture of the killed trigger")
    code = job.stop()
    check(code == 0, "the job exits 0 (got %d)" % code)


@case
def on_demand_stop():
    """`gpuscope trigger --stop PID` ends a capture from another terminal; refused in one line when none runs."""
    job = Job("loop", ["--step-ms", "20"])
    wait_steps([job.pid], 5)
    idle = gpuscope("trigger", "--stop", str(job.pid))
    check(idle.returncode == 2 and "no capture under way" in idle.stderr and len(idle.stderr.strip().splitlines()) == 1,
          "--stop with no capture: one line, exit 2: %s" % idle.stderr.strip())
    bad = gpuscope("trigger", "--stop", str(job.pid), "--steps", "3")
    check(bad.returncode == 2 and "--stop takes only the PID" in bad.stderr, "--stop refuses other options: %s" %
          bad.stderr.strip())
    trigger = subprocess.Popen([args.gpuscope, "trigger", str(job.pid), "--steps", "100000", "--control", "1", "-o",
                                "stopped.db"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=TMP)
    wait_for(lambda: ps_rows().get(job.pid, {}).get("state") == "tracing", "the capture is tracing")
    time.sleep(1.0)
    stop = gpuscope("trigger", "--stop", str(job.pid))
    check(stop.returncode == 0 and "capture stopped" in stop.stderr and "stopped.db" in stop.stderr,
          "--stop says the capture ended and where: %s" % stop.stderr.strip()[-400:])
    out, err = trigger.communicate(timeout=60)
    check(trigger.returncode == 0 and "captured steps" in err,
          "the trigger that started it finalizes the file and reports: rc %d %s" % (trigger.returncode, err.strip()[-300:]))
    _capture_ended(job, "stopped", err)
    code = job.stop()
    check(code == 0, "the job exits 0 (got %d)" % code)


@case
def on_demand_refusals():
    job = Job("loop", ["--step-ms", "20"])
    wait_steps([job.pid], 3)

    def refused(what, argv, expect, **kw):
        r = gpuscope(*argv, **kw)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 2 and len(lines) == 1 and re.search(expect, r.stderr),
              "%s: refused in one line, exit 2 (got %d: %s)" % (what, r.returncode, r.stderr.strip()[-300:]))

    # Another user (root runs the tests; nobody may not control root's job).
    if os.getuid() == 0:
        def as_nobody():
            os.setgid(65534)
            os.setuid(65534)
        refused("a trigger from another user", ["trigger", str(job.pid), "-o", "/tmp/nobody_capture.db"],
                "permission denied.*only its own user", preexec_fn=as_nobody)
        check(not os.path.exists("/tmp/nobody_capture.db"), "no file was made for it")
        other = gpuscope("ps", preexec_fn=as_nobody)
        check(str(job.pid) not in other.stdout, "another user's gpuscope ps does not list the job")
    else:
        print("skip another user's trigger (needs root to run as nobody)")
    sleeper = subprocess.Popen(["sleep", "30"])
    refused("a process without the collector", ["trigger", str(sleeper.pid)], "has no on-demand gpuscope collector")
    # Another process holding the sleeper's channel name (the name is predictable) is not believed.
    squatter = subprocess.Popen([sys.executable, "-c", "import socket, sys, time; s = socket.socket(socket.AF_UNIX); "
                                 "s.bind('\\0gpuscope/ctl/%d'); s.listen(1); print('ready', flush=True); time.sleep(30)"
                                 % sleeper.pid], stdout=subprocess.PIPE, text=True)
    squatter.stdout.readline()
    refused("a channel name held by another process", ["trigger", str(sleeper.pid)],
            "held by process %d" % squatter.pid)
    squatter.kill()
    squatter.wait()
    sleeper.kill()
    sleeper.wait()
    refused("a dead pid", ["trigger", str(sleeper.pid)], "no process %d" % sleeper.pid)
    refused("a pid that is no number", ["trigger", "abc"], "whole number")
    refused("--steps 0", ["trigger", str(job.pid), "--steps", "0"], "whole number")
    refused("--steps with --duration", ["trigger", str(job.pid), "--steps", "3", "--duration", "1"], "exclude")
    refused("--when slow-step below 1x", ["trigger", str(job.pid), "--when", "slow-step=0.5x"], "above 1")
    refused("--when data-wait", ["trigger", str(job.pid), "--when", "data-wait=10ms"], "not supported")
    refused("--every nonsense", ["trigger", str(job.pid), "--every", "soon"], "duration")
    refused("record --on-demand -o", ["record", "--on-demand", "-o", "x.db", "--", "true"], "one file per capture")
    # A job under plain `record` has the collector, but no control channel.
    plain = subprocess.Popen([args.gpuscope, "record", "-o", os.path.join(TMP, "plain.db"), "--", args.python, LOOP,
                              "--seconds", "20", "--stop-file", os.path.join(TMP, "plain.stop")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=TMP)
    children = wait_for(lambda: Job._children(plain.pid), "plain record started its job")
    wait_for(lambda: os.path.exists(os.path.join(TMP, "plain.db-wal")) or
             "libgpuscope_torch" in open("/proc/%d/maps" % children[0]).read(), "the plain job loaded the plugin")
    refused("a job recorded without --on-demand", ["trigger", str(children[0])], "not on demand")
    open(os.path.join(TMP, "plain.stop"), "w").close()
    plain.wait(timeout=60)
    check(job.stop() == 0, "the job runs on unharmed and exits 0")


@case
def on_demand_slow_step():
    job = Job("loop", ["--step-ms", "20", "--slow-ms", "500"])
    wait_steps([job.pid], 20)
    watch = subprocess.Popen([args.gpuscope, "trigger", str(job.pid), "--when", "slow-step=5x", "--cooldown", "10m",
                              "--steps", "4", "--control", "0", "-o", "slow_%n.db"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=TMP)
    wait_for(lambda: ps_rows().get(job.pid, {}).get("state") == "dormant" and watch.poll() is None and
             _rule_armed(job.pid), "the rule is armed")
    steps_before = ps_rows()[job.pid]["steps"]
    open(job.slow_file, "w").close()  # the next step sleeps 500 ms more: 25x the others
    wait_for(lambda: ps_rows().get(job.pid, {}).get("captures") == 1, "one capture after the slow step")
    wait_steps([job.pid], ps_rows()[job.pid]["steps"] + 10)
    open(job.slow_file, "w").close()  # slow again, within the cooldown: no capture
    wait_for(lambda: not os.path.exists(job.slow_file), "the second slow step ran")
    wait_steps([job.pid], ps_rows()[job.pid]["steps"] + 15)
    check(ps_rows().get(job.pid, {}).get("captures") == 1, "the second slow step, within the cooldown, captured nothing")
    code = job.stop()
    out, err = watch.communicate(timeout=60)
    check(watch.returncode == 0, "the watch ends with the job, exit 0: %s" % err.strip()[-300:])
    files = sorted(f for f in os.listdir(TMP) if f.startswith("slow_") and f.endswith(".db"))
    check(files == ["slow_1.db"], "one file, numbered by %%n: %s" % files)
    db = os.path.join(TMP, "slow_1.db")
    if os.path.exists(db):
        why = q1(db, "SELECT value FROM meta WHERE key = 'capture_trigger'") or ""
        m = re.search(r"step (\d+) took ([\d.]+) ms", why)
        check(m and float(m.group(2)) >= 400 and int(m.group(1)) >= steps_before,
              "its trigger names the planted slow step: %r" % why)
        traced = check_capture(db, job.pid, 4, 0, "slow-step capture")
        check(m and traced and traced[0] == int(m.group(1)) + 1,
              "it traced the 4 steps right after the slow one (%s after %s)" % (traced, m.group(1) if m else None))
        check(q1(db, "SELECT value FROM meta WHERE key = 'source'") == "gpuscope capture",
              "the job made the file itself (meta source)")
    check(code == 0, "the job exits 0")


def _rule_armed(pid):
    status = subprocess.run([args.gpuscope, "ps"], capture_output=True, text=True).stdout
    return str(pid) in status and os.path.exists("/proc/%d" % pid) and _status_field(pid, "rule")


def _status_field(pid, key):
    """One field of the collector's status (the control channel, as gpuscope ps reads it)."""
    import socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect("\0gpuscope/ctl/%d" % pid)
        s.sendall(b"status\n")
        data = s.recv(65536).decode()
    except OSError:
        return None
    finally:
        s.close()
    for field in data.split()[1:]:
        k, _, v = field.partition("=")
        if k == key:
            return v
    return None


@case
def on_demand_sigkill():
    job = Job("loop", ["--step-ms", "20"])
    wait_steps([job.pid], 5)
    trigger = subprocess.Popen([args.gpuscope, "trigger", str(job.pid), "--steps", "100000", "--control", "1", "-o",
                                "killed.db"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=TMP)
    wait_for(lambda: ps_rows().get(job.pid, {}).get("state") == "tracing", "the capture is tracing")
    time.sleep(1.5)  # a few writer ticks
    os.kill(job.pid, signal.SIGKILL)
    out, err = trigger.communicate(timeout=60)
    check(trigger.returncode == 0 and "ended during the capture" in err,
          "trigger says the job ended during the capture: %s" % err.strip()[-300:])
    job.record.wait(timeout=30)
    job.log.close()
    db = os.path.join(TMP, "killed.db")
    info = gpuscope("info", db)
    check(info.returncode == 0, "gpuscope info opens the file of a job killed mid-capture: %s" %
          info.stderr.strip()[-300:])
    # The collector never ended its traced stretch; trigger closed it from the file.
    traced, untraced = traced_steps(db, job.pid)
    check(len(traced) >= 5 and untraced == [min(traced) - 1],
          "its traced steps, after its one control step, are marked traced (%d traced, control %s)" %
          (len(traced), untraced))
    check(q1(db, "SELECT value FROM meta WHERE key = 'capture_ended_early'") == "1", "meta capture_ended_early says so")
    analyze = gpuscope("analyze", db)
    check(analyze.returncode == 0, "gpuscope analyze reads it: %s" % analyze.stderr.strip()[-300:])


@case
def on_demand_job():
    job = Job("ddp", ["--step-ms", "20"], torchrun=True)
    check(job.pid is not None, "record --on-demand started torchrun (pid %s)" % job.pid)
    ranks = wait_for(lambda: [p for p, r in ps_rows().items() if r["rank"] in ("0", "1") and r["steps"] >= 5],
                     "both ranks run and are listed by gpuscope ps", timeout=90) or []
    wait_for(lambda: len([p for p, r in ps_rows().items() if r["rank"] in ("0", "1") and r["steps"] >= 5]) == 2,
             "both ranks have steps", timeout=60)
    r = gpuscope("trigger", "--job", str(job.pid), "--steps", "5", "--control", "2", "-o", "job.db")
    check(r.returncode == 0, "trigger --job exits 0: %s" % r.stderr.strip()[-400:])
    db = os.path.join(TMP, "job.db")
    procs = q(db, "SELECT pid, rank FROM process WHERE rank IS NOT NULL ORDER BY rank")
    check([rank for _, rank in procs] == [0, 1], "one file holds rank 0 and rank 1: %s" % procs)
    per_rank = [check_capture(db, pid, 5, 2, "rank %d" % rank) for pid, rank in procs]
    check(len(per_rank) == 2 and per_rank[0] == per_rank[1] and per_rank[0],
          "both ranks traced the same step numbers: %s" % per_rank)
    # The job's own control stretch and --duration, which each rank would time by itself, are
    # counted in steps by trigger so that the ranks still trace the same steps.
    r = gpuscope("trigger", "--job", str(job.pid), "--duration", "0.3", "-o", "job_timed.db")
    check(r.returncode == 0 and "steps of" in r.stderr, "trigger --job --duration exits 0: %s" %
          r.stderr.strip()[-400:])
    db = os.path.join(TMP, "job_timed.db")
    if os.path.exists(db):
        by_rank = [traced_steps(db, pid) for pid, _ in q(db, "SELECT pid, rank FROM process WHERE rank IS NOT NULL")]
        check(len(by_rank) == 2 and by_rank[0] == by_rank[1] and by_rank[0][0] and len(by_rank[0][1]) >= 8,
              "both ranks: the same traced steps after the same control steps (>= 8): %s" % by_rank)
    check(job.stop(timeout=120) == 0, "the torchrun job exits 0")


@case
def on_demand_api():
    """collector/ondemand_api.h through ctypes (on_demand_api.py judges nothing; this does)."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "on_demand_api.py")
    r = subprocess.run([args.gpuscope, "record", "--on-demand", "--", args.python, script, TMP], capture_output=True,
                       text=True, timeout=120, cwd=TMP)
    check(r.returncode == 0, "the job exits 0: %s" % r.stderr.strip()[-400:])
    line = next((l for l in r.stdout.splitlines() if l.startswith("ON_DEMAND_API ")), None)
    check(line is not None, "the job printed its results")
    if not line:
        return
    res = __import__("json").loads(line[len("ON_DEMAND_API "):])
    check(res["state_before"] == 0, "dormant before any capture (state %s)" % res["state_before"])
    check(res["start_a"] == 0 and res["start_busy"] == -1 and "already under way" in res["errors"]["busy"],
          "a capture starts; a second one at once is refused with its reason: %r" % res["errors"]["busy"])
    states = res["states"]
    check(states[:1] == [1] and 2 in states and 3 in states and states[-1] == 0,
          "it waits for the boundary, runs its control stretch, traces, and the job is dormant again: %s" % states)
    check(res["start_b"] == 0 and res["stop_b"] == 0 and res["state_after_b"] == 0,
          "a capture until stop: started, stopped (waits for its file), dormant again")
    check(res["stop_none"] == 0, "stop after the capture ended returns 0")
    check(res["start_exists"] == -1 and "File exists" in res["errors"]["exists"],
          "an existing file is refused: %r" % res["errors"]["exists"])
    a, b = os.path.join(TMP, "api_a.db"), os.path.join(TMP, "api_b.db")
    check_capture(a, q1(a, "SELECT pid FROM process"), 5, 2, "api capture a")
    traced, untraced = traced_steps(b, q1(b, "SELECT pid FROM process"))
    check(untraced == [] and 8 <= len(traced) <= 11, "api capture b: no control stretch, traced until stop (%s)" % traced)
    for db in (a, b):
        check(q1(db, "SELECT value FROM meta WHERE key = 'capture_trigger'") == "gpuscope_capture_start" and
              not os.path.exists(db + "-wal"), "%s: made by the API, finalized (no -wal left)" % os.path.basename(db))


@case
def on_demand_attach():
    """gpuscope_attach(): the library dlopen'ed by a running python, no LD_PRELOAD, no record."""
    lib = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(args.gpuscope))), "lib",
                       "libgpuscope_collector.so")
    db = os.path.join(TMP, "attached.db")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "on_demand_attach.py")
    r = subprocess.run([args.python, script, lib, db], capture_output=True, text=True, timeout=120, cwd=TMP)
    check(r.returncode == 0, "the python exits 0: %s" % r.stderr.strip()[-400:])
    line = next((l for l in r.stdout.splitlines() if l.startswith("ON_DEMAND_ATTACH ")), None)
    res = __import__("json").loads(line[len("ON_DEMAND_ATTACH "):]) if line else {}
    check(res.get("state_loaded") == -1, "loaded but not attached: the API says unavailable (%s)" % res.get("state_loaded"))
    check(res.get("attach") == 0 and res.get("attach_again") == 0 and res.get("state_attached") == 0,
          "gpuscope_attach() makes it dormant and on demand (again: still 0): %s" % res)
    check(res.get("start") == 0 and res.get("steps") == 40 and res.get("state_end") == 0,
          "the torch plugin counts its steps and a capture runs: %s" % res)
    if os.path.exists(db):
        check_capture(db, q1(db, "SELECT pid FROM process"), 4, None, "attached capture")


if __name__ == "__main__":
    run()
