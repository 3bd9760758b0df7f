#!/usr/bin/env python3
"""Checks a recording made with `gpuscope record --sample ON,OFF` on the GPU: at least two
traced stretches (range source 7), every kernel, API call and op inside one of them (a few
launched just before a switch: allowed 1 %), zero dropped records, and kernels in every
stretch from the job's first kernel to its last, at least two of them (tracing resumed); no
noisy API calls (cudaGetDevice and the like, filtered by default) in any stretch; no two API
calls with one correlation id (CUPTI restarts them after cuptiFinalize); where the first such stretch has runtime API calls, every later one has them too (cuptiFinalize and a
new subscription must not lose a kind).
--gpu-behind: the job queues work far ahead of the GPU (CUDA graph replays), so kernels
launched in a stretch may run after it ends: kernels outside stretches are only reported.
--min-steps N: the median stretch holds at least N whole steps (a job replaying CUDA graphs
ahead of the GPU held one per stretch when each resume waited for the queued work).
--min-finalizes N: CUPTI was torn down at least N times (cuptiFinalize at an API exit), and
never gave one correlation id to many API calls (stat cupti_correlation_repeated).
--no-ops: recorded without the torch plugin: no ops expected.
--stretches N: N traced stretches with kernels instead of at least 2 (`record --steps A-B`: 1).
Several processes (torchrun): every check per process that ran GPU work.
Usage: check_sampled.py [--gpu-behind] [--min-steps N] [--min-finalizes N] [--stretches N] [--no-ops] RUN.db"""
import sqlite3
import sys

gpu_behind = "--gpu-behind" in sys.argv
argv = sys.argv[1:]


def option(name):
    if name not in argv:
        return 0
    i = argv.index(name)
    value = int(argv[i + 1])
    del argv[i:i + 2]
    return value


min_steps = option("--min-steps")
min_finalizes = option("--min-finalizes")
stretches = option("--stretches")
db = [a for a in argv if not a.startswith("--")][0]
c = sqlite3.connect(db)


def check_process(pid):
    """Every check, for the process `pid`: each process has its own schedule, stretches,
    CUPTI sessions and correlation ids."""
    windows = c.execute('SELECT start, "end" FROM range WHERE source = 7 AND pid = ? ORDER BY start', (pid,)).fetchall()
    stats = dict(c.execute("SELECT key, value FROM collector_stat WHERE pid = ?", (pid,)))
    ok = len(windows) == stretches if stretches else len(windows) >= 2
    print(f"{db} pid {pid}: {len(windows)} traced stretches; pauses {stats.get('tracing_pauses')}, "
          f"cuptiFinalize {stats.get('cupti_finalizes')} (given up {stats.get('cupti_teardown_failures', '-')}), "
          f"dropped {stats.get('dropped_cupti')} + {stats.get('dropped_cupti_no_buffer')}")
    for table in ("kernel", "api_call", "op"):
        total = c.execute(f"SELECT count(*) FROM {table} WHERE pid = ?", (pid,)).fetchone()[0]
        # Stretches do not overlap: what is not in one of them is outside.
        outside = total - sum(c.execute(f"SELECT count(*) FROM {table} WHERE pid = ? AND start >= ? AND start <= ?",
                                        (pid,) + w).fetchone()[0] for w in windows)
        print(f"  {table}: {total}, outside stretches {outside}")
        if table == "op" and "--no-ops" in sys.argv:
            ok = ok and total == 0
            continue
        ok = ok and total > 0 and (outside <= 0.01 * total or (gpu_behind and table == "kernel"))
    first_kernel, last_kernel = c.execute("SELECT min(start), max(start) FROM kernel WHERE pid = ?", (pid,)).fetchone()
    first_kernel, last_kernel = first_kernel or 0, last_kernel or 0
    # Switched off by default (cupti_source.cpp); CUPTI forgets that at every pause, so each
    # resume must switch them off again.
    noisy = c.execute("SELECT count(*) FROM api_call a JOIN string s ON s.id = a.name_id WHERE a.pid = ? AND "
                      "s.value IN ('cudaGetDevice', 'cuDevicePrimaryCtxGetState', 'cudaGetLastError')",
                      (pid,)).fetchone()[0]
    print(f"  noisy API calls (cudaGetDevice and the like): {noisy}")
    ok = ok and noisy == 0
    # CUPTI numbers correlation ids from 1 again after cuptiFinalize; the collector
    # shifts a new session's ids past the stored ones, so none may repeat.
    repeated = c.execute("SELECT count(*) - count(DISTINCT correlation) FROM api_call WHERE pid = ? AND correlation != 0",
                         (pid,)).fetchone()[0]
    print(f"  API calls sharing a correlation id: {repeated}; CUPTI sessions after the first: "
          f"{stats.get('cupti_sessions_after_first', 0)}")
    for corr, n, rows in c.execute(
            "SELECT a.correlation, count(*), group_concat(s.value || '@' || a.start || '/t' || a.tid, ' ') "
            "FROM api_call a JOIN string s ON s.id = a.name_id WHERE a.pid = ? AND a.correlation != 0 "
            "GROUP BY a.correlation HAVING count(*) > 1 LIMIT 5", (pid,)):
        print(f"    correlation {corr}: {n} calls: {rows}")
    ok = ok and repeated == 0
    # cuptiFinalize frees the names records point at: they must be decoded before it, and
    # device records must come even when CUDA started while untraced.
    devices = c.execute("SELECT group_concat(name, ', ') FROM device WHERE id IN "
                        "(SELECT DISTINCT device FROM kernel WHERE pid = ?)", (pid,)).fetchone()[0]
    odd_names = c.execute("SELECT count(*) FROM string s WHERE s.id IN (SELECT DISTINCT name_id FROM kernel WHERE pid = ?) "
                          "AND (s.value = '' OR s.value GLOB '*[^ -~]*')", (pid,)).fetchone()[0]
    print(f"  devices: {devices}; kernel names empty or not printable: {odd_names}")
    ok = ok and bool(devices) and odd_names == 0
    resumed = 0
    runtime_expected = False
    steps_in = []
    for w0, w1 in windows:
        n = c.execute("SELECT count(*) FROM kernel WHERE pid = ? AND start >= ? AND start <= ?", (pid, w0, w1)).fetchone()[0]
        steps = c.execute('SELECT count(*) FROM step WHERE pid = ? AND start >= ? AND "end" <= ?', (pid, w0, w1)).fetchone()[0]
        api = dict(c.execute("SELECT domain, count(*) FROM api_call WHERE pid = ? AND start >= ? AND start <= ? "
                             "GROUP BY domain", (pid, w0, w1)).fetchall())
        top = c.execute("SELECT s.value, count(*) FROM api_call a JOIN string s ON s.id = a.name_id "
                        "WHERE a.pid = ? AND a.start >= ? AND a.start <= ? GROUP BY 1 ORDER BY 2 DESC LIMIT 4",
                        (pid, w0, w1)).fetchall()
        print(f"  stretch {w0 / 1e9:.3f}-{w1 / 1e9:.3f} s: {n} kernels, {steps} steps, "
              f"API runtime {api.get(1, 0)} driver {api.get(2, 0)}; {', '.join(f'{k} {v}' for k, v in top)}")
        # Stretches before the job's first kernel (Python start-up) or after its last have none;
        # every other one must.
        if w1 >= first_kernel and w0 <= last_kernel:
            ok = ok and n > 0
            steps_in.append(steps)
            if resumed == 0:
                runtime_expected = api.get(1, 0) > 0
            elif runtime_expected and api.get(1, 0) == 0:
                print("    no runtime API calls in this stretch")
                ok = False
            resumed += 1
    ok = ok and (resumed == stretches if stretches else resumed >= 2)
    if min_steps:
        median_steps = sorted(steps_in)[len(steps_in) // 2] if steps_in else 0
        print(f"  median whole steps per stretch: {median_steps} (at least {min_steps} wanted)")
        ok = ok and median_steps >= min_steps
    if min_finalizes:
        print(f"  cuptiFinalize {stats.get('cupti_finalizes', 0)} (at least {min_finalizes} wanted); "
              f"API calls given a repeated id: {stats.get('cupti_correlation_repeated', 0)}")
        ok = ok and stats.get("cupti_finalizes", 0) >= min_finalizes and stats.get("cupti_correlation_repeated", 0) == 0
    ok = ok and stats.get("dropped_cupti", 0) == 0 and stats.get("dropped_cupti_no_buffer", 0) == 0
    for sev, text in c.execute("SELECT severity, text FROM message WHERE pid = ?", (pid,)):
        print(f"  message ({sev}): {text}")
    return ok


# The processes that ran GPU work (a torchrun launcher does not).
pids = [p for (p,) in c.execute("SELECT DISTINCT pid FROM kernel ORDER BY pid")]
ok = bool(pids)
for pid in pids:
    ok = check_process(pid) and ok
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
