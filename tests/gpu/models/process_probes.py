"""real_models.py --threads: what the process did in each timed block. For
each thread (the main one first), its CPU ms per step (and the system part of
it), voluntary and involuntary context switches and minor faults in the block,
and the CPU it last ran on (from /proc/self/task); the machine's steal and busy
share over the block (/proc/stat); probe_ms, a fixed piece of pure Python timed
after the block; and launch_us, the CPU time of one launch of a tiny op (512
`add_` on a 1-element CUDA tensor, GPU idle before them, median of 3 tries): to
see what a slow recorded process spends its time on, whether its CPU as a whole
got slower, and whether each launch costs it more (CUPTI's part of a launch
differs between machine starts; does it between processes?).
"""
import os
import statistics
import time

import torch


def thread_stats():
    """{tid: (name, user_ticks, system_ticks, minflt, vcsw, ivcsw, last_cpu)} of this process's threads."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/stat" % tid) as f:
                stat = f.read()
            with open("/proc/self/task/%s/status" % tid) as f:
                status = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()  # from field 3 (state) on
        out[int(tid)] = (name, int(fields[11]), int(fields[12]), int(fields[7]),
                         int(status["voluntary_ctxt_switches"]), int(status["nonvoluntary_ctxt_switches"]),
                         int(fields[36]))
    return out


def machine_ticks():
    """The machine's (steal, busy, all) CPU ticks from /proc/stat: time the
    hypervisor gave the vCPUs to others, and how busy the whole machine was."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return v[7], v[0] + v[1] + v[2] + v[5] + v[6], sum(v[:8])


def cpu_probe():
    """ms for a fixed piece of pure Python work (no torch, no CUDA): if it slows
    down in a slow recorded run, the CPU itself is slower there (frequency,
    the hypervisor, caches), not the code paths gpuscope or CUPTI hook."""
    t0 = time.perf_counter()
    total = 0
    for i in range(300000):
        total += i & 7
    return round(1000.0 * (time.perf_counter() - t0), 3)


def launch_probe(x, launches=512, tries=3):
    """CPU microseconds per launch of a tiny op on an idle GPU: torch's dispatch
    and the launch, plus whatever a tracer adds to each launch."""
    per = []
    for _ in range(tries):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(launches):
            x.add_(1)
        per.append(1e6 * (time.perf_counter() - t0) / launches)
    torch.cuda.synchronize()
    return round(statistics.median(per), 3)


def thread_deltas(before, after, steps):
    """Per thread seen at both ends and busy in between: name, CPU ms per step
    (user and system), faults, switches and last CPU; the main thread first."""
    tick_ms = 1000.0 / os.sysconf("SC_CLK_TCK")
    rows = []
    for tid, a in after.items():
        b = before.get(tid)
        if b is None:
            continue
        user, system = (a[1] - b[1]) * tick_ms / steps, (a[2] - b[2]) * tick_ms / steps
        row = dict(tid=tid, name=a[0], cpu_ms_per_step=round(user + system, 2), sys_ms_per_step=round(system, 2),
                   minflt=a[3] - b[3], vcsw=a[4] - b[4], ivcsw=a[5] - b[5], cpu=a[6])
        if tid == os.getpid() or user + system > 0 or row["vcsw"] + row["ivcsw"] > 0:
            rows.append(row)
    rows.sort(key=lambda r: (r["tid"] != os.getpid(), -r["cpu_ms_per_step"]))
    return rows[:8]


def block_stats(before, steps, probe_tensor):
    """One block's entry of --threads: the threads, the machine's steal and
    busy share over the block, and the CPU and launch probes run after it."""
    threads, machine = before
    steal, busy, total = (a - b for a, b in zip(machine_ticks(), machine))
    return dict(threads=thread_deltas(threads, thread_stats(), steps),
                steal_pct=round(100.0 * steal / max(total, 1), 2), busy_pct=round(100.0 * busy / max(total, 1), 2),
                probe_ms=cpu_probe(), launch_us=launch_probe(probe_tensor))


def block_start():
    """What block_stats compares the end of a block with."""
    return thread_stats(), machine_ticks()
