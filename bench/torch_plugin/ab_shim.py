#!/usr/bin/env python3
"""Runs a training script with op recording paused in alternate blocks of optimizer steps.

A benchmark shim for bench/torch_plugin/ab_steps.py, run under `gpuscope record`:

  gpuscope record -- python3 ab_shim.py --block N [--idle] SCRIPT.py ARGS...

After every N optimizer steps it switches the torch plugin's op recording off or
back on through the plugin's exported gpuscope_plugin_pause_ops (1: the op
callback off; with --idle, 2: the callback kept on and returning at once, so
the blocks without ops still pay torch's cost of calling it). Steps 0..N-1
record ops, N..2N-1 do not, and so on; the collector's own schedule (the
control stretch, --sample) still applies on top. Everything else in the process
is unchanged, so one process compares steps with and without ops.
"""
import argparse
import ctypes
import os
import runpy
import sys

import torch


def find_plugin():
    """The plugin's pause function once the collector has loaded it, else None."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.rstrip("\n").split(None, 5)[-1]
            if path.endswith(".so") and "libgpuscope_torch" in path:
                return ctypes.CDLL(path).gpuscope_plugin_pause_ops
    return None


class Blocks:
    def __init__(self, block, idle):
        self.block, self.mode_off, self.steps, self.pause = block, 2 if idle else 1, 0, None

    def after_step(self):
        self.steps += 1
        if self.steps % self.block:
            return
        if self.pause is None:
            self.pause = find_plugin()
            if self.pause is None:
                sys.exit("ab_shim.py: the torch plugin is not loaded (run under `gpuscope record` with torch tracing)")
        self.pause(0 if (self.steps // self.block) % 2 == 0 else self.mode_off)


def hook_optimizer_steps(blocks):
    """Calls blocks.after_step() after every optimizer step of the process."""
    import torch.optim.optimizer as optim

    if hasattr(optim, "register_optimizer_step_post_hook"):  # torch >= 2.0
        optim.register_optimizer_step_post_hook(lambda *_: blocks.after_step())
        return
    wrapped = set()  # torch 1.13: wrap each optimizer class's step once
    original_init = torch.optim.Optimizer.__init__

    def init(self, *a, **kw):
        original_init(self, *a, **kw)
        cls = type(self)
        if cls in wrapped:
            return
        wrapped.add(cls)
        step = cls.step

        def counted_step(opt, *sa, **skw):
            out = step(opt, *sa, **skw)
            blocks.after_step()
            return out

        counted_step.hooked = True  # torch 1.13 wraps a class's step for the profiler unless marked
        cls.step = counted_step

    torch.optim.Optimizer.__init__ = init


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--block", type=int, required=True, help="optimizer steps per block")
    ap.add_argument("--idle", action="store_true", help="blocks without ops keep the op callback on")
    ap.add_argument("script", help="the training script, then its arguments")
    ap.add_argument("script_args", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    if args.block < 1:
        ap.error("--block must be at least 1")
    hook_optimizer_steps(Blocks(args.block, args.idle))
    sys.argv = [args.script] + args.script_args
    sys.path.insert(0, os.path.dirname(os.path.abspath(args.script)))  # as `python3 SCRIPT.py` would
    runpy.run_path(args.script, run_name="__main__")


if __name__ == "__main__":
    main()
