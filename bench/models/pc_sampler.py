#!/usr/bin/env python3
"""Where the threads of a running process spend their CPU, by library: a
sampling profiler that needs nothing but ptrace (no perf, no gdb, no symbols).

Each sample interrupts one thread (PTRACE_INTERRUPT), reads its instruction
pointer and whether it sits in a system call, and lets it go on; the address is
mapped to the library it falls in (/proc/PID/maps). Samples are taken from the
moment a thread named --after appears plus --delay seconds, for --seconds.
Used by bench/models/slow_mode.sh to compare a fast and a slow recorded
ResNet-50 (issue 18): which library grows, libcuda, libcupti, libtorch,
gpuscope's own, or the kernel.

Usage: pc_sampler.py --pid PID [--threads python3,pt_autograd_0] [--after pt_autograd_0]
                     [--delay 2] [--seconds 4] [--hz 200] -o samples.json
"""

import argparse
import bisect
import collections
import ctypes
import json
import os
import sys
import time

PTRACE_DETACH, PTRACE_GETREGS, PTRACE_CONT = 17, 12, 7
PTRACE_SEIZE, PTRACE_INTERRUPT = 0x4206, 0x4207
WALL = 0x40000000
RIP, ORIG_RAX = 16, 15  # in struct user_regs_struct (x86-64)

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long


def threads_of(pid):
    """{tid: name} of the process's threads now."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                out[int(tid)] = f.read().strip()
        except OSError:
            pass
    return out


def read_maps(pid):
    """Sorted (start, end, library) of the process's executable mappings."""
    spans = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 5 or "x" not in parts[1]:
                continue
            start, end = (int(x, 16) for x in parts[0].split("-"))
            spans.append((start, end, os.path.basename(parts[5]) if len(parts) > 5 else "[anon]"))
    spans.sort()
    return spans


def library_of(spans, starts, address):
    i = bisect.bisect_right(starts, address) - 1
    if i >= 0 and spans[i][0] <= address < spans[i][1]:
        return spans[i][2]
    return "[unmapped]"


def sample_once(tid):
    """(rip, orig_rax) of a seized thread, or None when it is gone."""
    if libc.ptrace(PTRACE_INTERRUPT, tid, None, None) != 0:
        return None
    status = ctypes.c_int()
    if libc.waitpid(tid, ctypes.byref(status), WALL) != tid:
        return None
    regs = (ctypes.c_ulonglong * 27)()
    got = libc.ptrace(PTRACE_GETREGS, tid, None, ctypes.byref(regs)) == 0
    libc.ptrace(PTRACE_CONT, tid, None, None)
    return (regs[RIP], ctypes.c_longlong(regs[ORIG_RAX]).value) if got else None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--threads", default="python3,pt_autograd_0", help="names of the threads to sample")
    p.add_argument("--after", default="pt_autograd_0", help="start once a thread of this name exists")
    p.add_argument("--delay", type=float, default=2.0, help="seconds after that")
    p.add_argument("--seconds", type=float, default=4.0)
    p.add_argument("--hz", type=float, default=200.0, help="samples per second per thread")
    p.add_argument("-o", "--output", required=True)
    a = p.parse_args()

    wanted = set(a.threads.split(","))
    deadline = time.time() + 120
    while a.after not in threads_of(a.pid).values():
        if time.time() > deadline or not os.path.exists("/proc/%d" % a.pid):
            sys.exit("pc_sampler.py: no thread %s in process %d" % (a.after, a.pid))
        time.sleep(0.05)
    time.sleep(a.delay)
    # The main thread's name is the process's; only the first of that name
    # (the lowest tid, the main thread) is taken.
    chosen = {}
    for tid, name in sorted(threads_of(a.pid).items()):
        if name in wanted and name not in chosen.values():
            chosen[tid] = name
    seized = [tid for tid in chosen if libc.ptrace(PTRACE_SEIZE, tid, None, None) == 0]
    if not seized:
        sys.exit("pc_sampler.py: cannot trace process %d: %s" % (a.pid, os.strerror(ctypes.get_errno())))
    spans = read_maps(a.pid)
    starts = [s[0] for s in spans]
    libraries = {tid: collections.Counter() for tid in seized}
    syscalls = {tid: collections.Counter() for tid in seized}
    period = 1.0 / a.hz
    end = time.time() + a.seconds
    taken = 0
    while time.time() < end and seized:
        for tid in list(seized):
            got = sample_once(tid)
            if got is None:
                seized.remove(tid)
                continue
            rip, nr = got
            library = library_of(spans, starts, rip)
            if library == "[unmapped]":  # a library loaded since: read the maps again
                spans = read_maps(a.pid)
                starts = [s[0] for s in spans]
                library = library_of(spans, starts, rip)
            libraries[tid][library] += 1
            if nr >= 0:
                syscalls[tid][nr] += 1
            taken += 1
        time.sleep(period)
    for tid in seized:
        libc.ptrace(PTRACE_DETACH, tid, None, None)
    result = {chosen[tid] + ":" + str(tid): dict(samples=sum(libraries[tid].values()),
                                                  libraries=dict(libraries[tid].most_common(15)),
                                                  syscalls={str(k): v for k, v in syscalls[tid].most_common(8)})
              for tid in libraries}
    with open(a.output, "w") as f:
        json.dump(result, f)
    print("pc_sampler.py: %d samples of %d threads" % (taken, len(libraries)), file=sys.stderr)


if __name__ == "__main__":
    main()
