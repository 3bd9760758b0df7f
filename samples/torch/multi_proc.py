"""Two child processes doing GPU work at the same time.

The parent starts two copies of this script (--child) with subprocess.Popen,
each running a few matmul steps on the device, and exits 0 only when both
children did. It checks that a profiler follows child processes (or records
each process) and keeps their records apart by pid.

  python multi_proc.py --steps 20
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

import torch

import sample_common

CHILDREN = 2
CHILD_PREFIX = "GPUSCOPE_CHILD "


def run_child(args, device):
    dim = 4096 if device.type == "cuda" else 256
    torch.manual_seed(args.rank)
    a = torch.randn(dim, dim, device=device)
    b = torch.randn(dim, dim, device=device)

    def step(_):
        c = a @ b
        a.copy_(c / dim)  # keep values bounded; also a second kernel per step

    times_ms = sample_common.run_steps(args, device, step)
    # The parent reads this line; the child's own stdout is captured by it.
    print(CHILD_PREFIX + json.dumps({
        "rank": args.rank,
        "pid": os.getpid(),
        "steps": args.steps,
        "median_step_ms": round(statistics.median(times_ms), 3) if times_ms else None,
        "dim": dim,
    }), flush=True)


def run_parent(args, device):
    procs = []
    for rank in range(CHILDREN):
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--rank", str(rank),
               "--device", args.device, "--steps", str(args.steps), "--warmup", str(args.warmup)]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, universal_newlines=True))
    children = []
    ok = True
    for proc in procs:
        out, _ = proc.communicate()
        facts = {"pid": proc.pid, "returncode": proc.returncode}
        for line in out.splitlines():
            if line.startswith(CHILD_PREFIX):
                facts.update(json.loads(line[len(CHILD_PREFIX):]))
        children.append(facts)
        ok = ok and proc.returncode == 0
    # The parent does no GPU work itself: its step figures summarise the
    # children's median step times, and it never touches the device.
    medians = [c["median_step_ms"] for c in children if c.get("median_step_ms") is not None]
    sample_common.report("multi_proc", args, device, medians, device_facts=False,
                         parent_pid=os.getpid(), children=children, ok=ok)
    return 0 if ok else 1


def main():
    parser = sample_common.base_parser(__doc__.splitlines()[0], cpu_steps=5, cuda_steps=20,
                                       profile=False)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--rank", type=int, default=0, help=argparse.SUPPRESS)
    args = sample_common.finish_args(parser.parse_args())
    device = torch.device(args.device)
    if args.child:
        run_child(args, device)
        return 0
    return run_parent(args, device)


if __name__ == "__main__":
    sys.exit(main())
