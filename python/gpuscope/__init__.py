"""gpuscope from Python: analyse a recording, mark steps, profile part of a process.

    import gpuscope
    with gpuscope.profile("run.db", steps=20):   # a notebook cell, or around a loop
        train(model, loader)
    gpuscope.step()                               # marks a step in loops without an optimizer
    report = gpuscope.analyze("run.db")            # `gpuscope analyze --format json` as a dict

The `gpuscope` command of the same wheel records whole jobs:
`gpuscope record -o run.db -- python train.py`. docs/python.md has the rest."""
import atexit
import contextlib
import ctypes
import json
import os
import subprocess
import sys

from gpuscope import _capture, _plugin
from gpuscope._native import GpuscopeError, binary

__version__ = "@VERSION@"
__all__ = ["GpuscopeError", "analyze", "profile", "step", "binary"]


def _one_line(stderr, returncode):
    lines = [l for l in stderr.splitlines() if l.strip()]
    return lines[-1] if lines else "gpuscope: error: exit code %d" % returncode


def analyze(path, steps=None, pid=None, rank=None, device=None, what_if=True, wait=False):
    """The report of `gpuscope analyze PATH --format json`, as a dict
    (report["summary"], report["findings"], report["plan"], ...). The keyword
    arguments are analyze's options. Raises GpuscopeError with the CLI's line."""
    path = os.fsdecode(path)
    cmd = [binary(), "analyze", "--format", "json"]
    for flag, value in (("--steps", steps), ("--pid", pid), ("--rank", rank), ("--device", device)):
        if value is not None:
            cmd += [flag, str(value)]
    if not what_if:
        cmd.append("--no-what-if")
    if wait:
        cmd.append("--wait")
    # After `--` the path is only a path: '-dash.db' or '--list-rules' is a file name, never an option.
    cmd += ["--", path]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise GpuscopeError(_one_line(done.stderr, done.returncode))
    try:
        return json.loads(done.stdout)
    except ValueError as e:
        raise GpuscopeError("gpuscope: error: analyze %s: its JSON did not parse (%s)" % (path, e)) from None


_step = {"number": 0, "range": None}


def step():
    """Marks the end of a training step and the start of the next.

    Each call closes the `ProfilerStep#N` range the previous call opened and
    opens `ProfilerStep#N+1`, as torch.profiler's `prof.step()` does; gpuscope's
    torch plugin takes those ranges as the steps (plugins/torch/README.md, rule 1),
    before optimizer calls or backward passes. Call it at the end of every
    iteration; the first call starts step 0, so the code before it is not a
    step, and the code after the last call is not one either.
    Cheap when nothing records (a record_function with no callback)."""
    import torch  # here: `import gpuscope` must not cost an `import torch`

    rf = _step["range"]
    if rf is not None:
        rf.__exit__(None, None, None)
    else:
        atexit.register(_leave_last_step_open)
    rf = torch.autograd.profiler.record_function("ProfilerStep#%d" % _step["number"])
    rf.__enter__()
    _step["range"] = rf
    _step["number"] += 1


def _leave_last_step_open():
    """The range after the last step() covers whatever the program does after
    its loop: it must not become a step when the interpreter frees it at exit
    (torch ends a RecordFunction in its destructor), so it is never freed."""
    if _step["range"] is not None:
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(_step["range"]))


@contextlib.contextmanager
def profile(path, steps=20, seconds=0.0, control=True):
    """Records `steps` steps (or `seconds` seconds, when steps is 0) of this
    process into the new recording `path`, with the collector already in the
    process (`gpuscope record --on-demand`) or the wheel's, loaded now and
    dormant between captures. The capture begins at the next step boundary of
    the torch plugin, after a control stretch (8 untraced steps, at least
    0.2 s) that measures the untraced step as `record` does (control=False
    skips it), and ends after `steps` steps (traced, plus the first traced
    step, which pays for the tracer starting and which analyze leaves out: so
    analyze analyses `steps` steps) or with the block, whichever comes
    first; a block that ends inside the control stretch traces no step. The
    file is a normal recording (`gpuscope.analyze(path)`, `gpuscope view`);
    a block in which no step ended leaves no file (one line on stderr says
    so), as `gpuscope trigger` does. Errors (an empty path, steps not a whole
    number from 0 to 1000000, seconds not a number from 0 to 86400, the
    collector has no capture API, the collector records the whole process
    already, another capture runs, the file exists) raise GpuscopeError with
    the CLI's one-line message."""
    path = _capture.check_request(path, steps, seconds)
    if "torch" in sys.modules and not _capture.attached():
        # The plugin gives the steps and ops; built on first use as `setup torch` does.
        _plugin.ensure_for_python(binary(), sys.executable, "this capture runs")
    _capture.start(path, steps, seconds, control)
    try:
        yield path
    finally:
        _capture.stop(path)
