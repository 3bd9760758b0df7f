#!/usr/bin/env python3
"""End-to-end checks of `gpuscope record` and the collector on the CPU (NVTX):
pass-through of the job, bad use, signals, SIGKILL, LD_PRELOAD and
multi-process recording. Run by CTest; exits non-zero on the first failure."""
import argparse
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("--bin", required=True)
args = ap.parse_args()
GS = os.path.join(args.bin, "gpuscope")
NVTX = os.path.join(args.bin, "nvtx_loop")
LIB = os.path.join(os.path.dirname(args.bin), "lib", "libgpuscope_collector.so")
TMP = tempfile.mkdtemp(prefix="gpuscope_cli_test_")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, **kw)


def db_path(name):
    p = os.path.join(TMP, name)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(p + suffix):
            os.remove(p + suffix)
    return p


def query(path, sql):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def child_pid(parent, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with open(f"/proc/{parent}/task/{parent}/children") as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    raise RuntimeError("no child process")


def wait_for_line(proc, text):
    for line in proc.stdout:
        if text in line:
            return True
    return False


# --- the job's exit code, stdout, stderr and stdin are its own ---------------
r = run([GS, "record", "-o", db_path("hi.db"), "--", "sh", "-c", "echo hi; exit 7"])
check(r.returncode == 7, f"exit code passes through (got {r.returncode})")
check(r.stdout == "hi\n", f"stdout is exactly the job's (got {r.stdout!r})")
r = run([GS, "record", "-o", db_path("err.db"), "--", "sh", "-c", "echo oops >&2"])
check("oops" in r.stderr and r.returncode == 0, "stderr passes through")
r = run([GS, "record", "-o", db_path("cat.db"), "--", "cat"], input="line one\nline two\n")
check(r.stdout == "line one\nline two\n", "stdin reaches the job")
r = run([GS, "record", "-o", db_path("args.db"), "--", "printf", "[%s]", "--seconds", "2", "--", "-x"])
check(r.stdout == "[--seconds][2][--][-x]", f"arguments reach the job verbatim (got {r.stdout!r})")
r = run([GS, "record", "-o", db_path("sig.db"), "--", "sh", "-c", "kill -TERM $$"])
check(r.returncode == -signal.SIGTERM, f"a job killed by a signal re-raises it (got {r.returncode})")

# --- bad use: exit 2, one line, the job never starts -------------------------
marker = os.path.join(TMP, "marker")
existing = db_path("existing.db")
with open(existing, "w") as f:
    f.write("precious")
bad_cases = {
    "no command": [GS, "record", "-o", db_path("x.db")],
    "empty command": [GS, "record", "-o", db_path("x.db"), "--"],
    "unknown option": [GS, "record", "--bogus", "-o", db_path("x.db"), "--", "touch", marker],
    "unknown trace source": [GS, "record", "--trace", "cuda,gpu", "-o", db_path("x.db"), "--", "touch", marker],
    "unwritable output": [GS, "record", "-o", "/nonexistent_dir/x.db", "--", "touch", marker],
    "existing output without --force": [GS, "record", "-o", existing, "--", "touch", marker],
    "command not found": [GS, "record", "-o", db_path("x.db"), "--", "no_such_program_xyz"],
    "--steps not a range": [GS, "record", "--steps", "5", "-o", db_path("x.db"), "--", "touch", marker],
    "--steps backwards": [GS, "record", "--steps", "9-3", "-o", db_path("x.db"), "--", "touch", marker],
    "--steps with --sample": [GS, "record", "--steps", "2-4", "--sample", "1,1", "-o", db_path("x.db"), "--", "touch",
                              marker],
    "--steps without torch": [GS, "record", "--trace", "cuda,nvtx", "--steps", "2-4", "-o", db_path("x.db"), "--",
                              "touch", marker],
}
for what, argv in bad_cases.items():
    r = run(argv)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    check(r.returncode == 2 and len(lines) == 1 and not os.path.exists(marker),
          f"bad use: {what} -> exit 2, one line, job not started (rc {r.returncode}, stderr {r.stderr!r})")
check(open(existing).read() == "precious", "an existing output is left untouched without --force")
r = run([GS, "record", "--force", "-o", existing, "--", NVTX, "--seconds", "1"])
check(r.returncode == 0 and query(existing, "select count(*) from range")[0][0] > 0, "--force overwrites")
r = run([GS, "info", existing])
stored_version = query(existing, "select value from meta where key='schema_version'")[0][0]
check(r.returncode == 0 and "range" in r.stdout and f"schema version  {stored_version}\n" in r.stdout,
      f"info summarizes a recording (schema version {stored_version} as stored)")
r = run([GS, "info", marker + "_missing"])
check(r.returncode == 2 and "no such file" in r.stderr, "info on a missing file: exit 2")

# --- NVTX recorded; SIGTERM leaves a complete database -----------------------
for target in ("job", "gpuscope"):
    path = db_path(f"term_{target}.db")
    p = subprocess.Popen([GS, "record", "-o", path, "--", NVTX, "--seconds", "30"], stdout=subprocess.PIPE,
                         text=True)
    kid = child_pid(p.pid)
    wait_for_line(p, "tick 2")
    sent = time.monotonic_ns()
    os.kill(kid if target == "job" else p.pid, signal.SIGTERM)
    rc = p.wait(timeout=30)
    p.stdout.close()
    ok = query(path, "pragma integrity_check")[0][0]
    origin = int(query(path, "select value from meta where key='origin_ns'")[0][0])
    n, last = query(path, "select count(*), max(\"end\") from range")[0]
    lag_ms = (sent - (origin + (last or 0))) / 1e6
    check(rc == -signal.SIGTERM, f"SIGTERM to the {target}: gpuscope ends by SIGTERM too (rc {rc})")
    check(ok == "ok" and n > 1000, f"SIGTERM to the {target}: database intact with {n} ranges")
    check(lag_ms < 300, f"SIGTERM to the {target}: complete up to the signal (last range {lag_ms:.0f} ms before it)")

# --- SIGKILL: integrity holds, everything older than one second is there ------
path = db_path("kill.db")
p = subprocess.Popen([GS, "record", "-o", path, "--", NVTX, "--seconds", "30"], stdout=subprocess.PIPE, text=True)
kid = child_pid(p.pid)
wait_for_line(p, "tick 2")
killed = time.monotonic_ns()
os.kill(kid, signal.SIGKILL)
rc = p.wait(timeout=30)
p.stdout.close()
ok = query(path, "pragma integrity_check")[0][0]
origin = int(query(path, "select value from meta where key='origin_ns'")[0][0])
n, last = query(path, "select count(*), max(\"end\") from range")[0]
lag_ms = (killed - (origin + (last or 0))) / 1e6
check(rc == -signal.SIGKILL, f"SIGKILL: gpuscope reports the job's SIGKILL (rc {rc})")
check(ok == "ok", "SIGKILL: PRAGMA integrity_check passes")
check(n > 1000 and lag_ms < 1000, f"SIGKILL: holds everything older than 1 s ({n} ranges, last {lag_ms:.0f} ms before the kill)")

# --- a nearly full disk: the recording stops, the job runs on to its end -----
# GPUSCOPE_MIN_FREE_MB above what any disk has stands for a full one.
for floor, stops in ((str(1 << 40), True), ("0", False)):
    path = db_path(f"floor_{floor}.db")
    r = subprocess.run([GS, "record", "-o", path, "--", NVTX, "--seconds", "2"], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, GPUSCOPE_MIN_FREE_MB=floor))
    said = [l for l in r.stderr.splitlines() if "recording stopped" in l]
    first, last = query(path, 'select min(start), max("end") from range')[0]
    span_s = ((last or 0) - (first or 0)) / 1e9
    meta = query(path, "select value from meta where key = 'recording_stopped'")
    if stops:
        check(r.returncode == 0 and r.stdout.count("tick") >= 2, f"disk floor: the job runs to its end (rc {r.returncode})")
        check(len(said) == 1 and "GPUSCOPE_MIN_FREE_MB" in said[0], f"disk floor: one line says the recording stopped: {said}")
        check(query(path, "pragma integrity_check")[0][0] == "ok", "disk floor: the recording is intact")
        check(meta and "MB left on the file system of" in meta[0][0], f"disk floor: meta recording_stopped says why: {meta}")
        check(query(path, "select count(*) from message where severity = 3 and text like 'recording stopped:%'")[0][0] == 1,
              "disk floor: a message row says it too")
        check("ends before the job did" in r.stderr, "disk floor: record's last line says the file ends early")
        check(span_s < 1.0, f"disk floor: nothing recorded after the stop ({span_s:.2f} s of the 2 s job)")
    else:
        check(not said and not meta and span_s > 1.5, f"GPUSCOPE_MIN_FREE_MB=0: never stops ({span_s:.2f} s recorded)")

# --- a write that fails (the disk filled between two checks): same outcome -----
# A file size limit on the job (not on `record`) makes SQLite's writes fail.
path = db_path("write_fails.db")
r = subprocess.run([GS, "record", "-o", path, "--", "sh", "-c", f"ulimit -f 400; trap '' XFSZ; exec {NVTX} --seconds 2"],
                   capture_output=True, text=True, timeout=120)
said = [l for l in r.stderr.splitlines() if "recording stopped" in l]
meta = query(path, "select value from meta where key = 'recording_stopped'")
check(r.returncode == 0 and r.stdout.count("tick") >= 2, f"write fails: the job runs to its end (rc {r.returncode})")
check(len(said) == 1 and "writing " + path + " failed" in said[0], f"write fails: one line says the recording stopped: {said}")
check(query(path, "pragma integrity_check")[0][0] == "ok", "write fails: the recording is intact")
check(meta and meta[0][0].startswith("writing the file failed"), f"write fails: meta recording_stopped says why: {meta}")
check("ends before the job did" in r.stderr, "write fails: record's last line says the file ends early")

# --- without the CLI: LD_PRELOAD with %p, and NVTX_INJECTION64_PATH alone -----
env = dict(os.environ, LD_PRELOAD=LIB, GPUSCOPE_OUTPUT=os.path.join(TMP, "pre_%p.db"))
p = subprocess.run([NVTX, "--seconds", "1"], env=env, capture_output=True, timeout=60)
found = [f for f in os.listdir(TMP) if f.startswith("pre_") and f.endswith(".db")]
check(p.returncode == 0 and len(found) == 1, f"LD_PRELOAD + GPUSCOPE_OUTPUT with %p writes one file ({found})")
if found:
    pid_in_name = int(found[0][4:-3])
    rows = query(os.path.join(TMP, found[0]), "select pid, count(*) from range")
    check(rows[0][0] == pid_in_name and rows[0][1] > 100, "  ... holding that pid's NVTX ranges")
env = dict(os.environ, NVTX_INJECTION64_PATH=LIB, GPUSCOPE_OUTPUT=db_path("inj.db"))
p = subprocess.run([NVTX, "--seconds", "1"], env=env, capture_output=True, timeout=60)
check(p.returncode == 0 and query(env["GPUSCOPE_OUTPUT"], "select count(*) from range")[0][0] > 100,
      "NVTX_INJECTION64_PATH alone records NVTX")

# --- several processes, one database; --trace; --delay/--duration ------------
path = db_path("multi.db")
r = run([GS, "record", "-o", path, "--", "sh", "-c", f"{NVTX} --seconds 1 & {NVTX} --seconds 1; wait"])
procs = query(path, "select count(*) from process")[0][0]
per_pid = query(path, "select count(distinct pid) from range")[0][0]
check(r.returncode == 0 and procs == 2 and per_pid == 2, f"two processes share one database ({procs} processes)")
path = db_path("notrace.db")
r = run([GS, "record", "--trace", "cuda", "-o", path, "--", NVTX, "--seconds", "1"])
check(r.returncode == 0 and query(path, "select count(*) from range")[0][0] == 0, "--trace without nvtx records no NVTX")
path = db_path("window.db")
r = run([GS, "record", "--delay", "1", "--duration", "1", "-o", path, "--", NVTX, "--seconds", "3"])
lo, hi = query(path, "select min(start), max(start) from range")[0]
check(r.returncode == 0 and lo is not None and lo >= 1e9 and hi <= 2.01e9,
      f"--delay 1 --duration 1 keeps only that window (starts {lo}..{hi} ns)")
windows = query(path, "select start, \"end\" from range where source = 7")
check(len(windows) == 1 and 1e9 <= windows[0][0] <= 1.2e9 and 1.9e9 <= windows[0][1] <= 2.2e9,
      f"the window is stored as one traced stretch (range source 7): {windows}")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
