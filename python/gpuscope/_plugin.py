"""The torch plugin on first use: before `gpuscope record` runs a Python job,
the plugin for that Python's torch is built into the cache `gpuscope setup
torch` fills (<cache>/torch/<version>/libgpuscope_torch.so), unless it is
there. The check costs no `import torch`: torch's version.py is read as the
collector reads it (trace_formats/common/plugin_cache.cpp)."""
import os
import re
import shutil
import subprocess
import sys

_FIND_VERSION_PY = (
    "import importlib.util, os\n"
    "s = importlib.util.find_spec('torch')\n"
    "print(os.path.join(os.path.dirname(s.origin), 'version.py') if s and s.origin else '')\n"
)


def cache_dir():
    """GPUSCOPE_CACHE_DIR, else $XDG_CACHE_HOME/gpuscope, else ~/.cache/gpuscope (plugin_cache::cache_dir)."""
    if os.environ.get("GPUSCOPE_CACHE_DIR"):
        return os.environ["GPUSCOPE_CACHE_DIR"]
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg.startswith("/"):
        return os.path.join(xdg, "gpuscope")
    home = os.environ.get("HOME", "")
    return os.path.join(home, ".cache", "gpuscope") if home else ""


def folder_name(version):
    """plugin_cache::folder_name: letters, digits and '.+-_' kept, anything else '_', no leading '.'."""
    out = re.sub(r"[^A-Za-z0-9.+\-_]", "_", version)
    return "_" + out[1:] if out.startswith(".") else out


def read_version_py(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = re.match(r"""\s*__version__\s*(?::\s*str\s*)?=\s*['"]([^'"]+)['"]""", line)
                if m:
                    return m.group(1)
    except OSError:
        pass
    return ""


def torch_version(python):
    """The torch version `python` would import, without importing it; '' when it has none."""
    try:
        out = subprocess.run([python, "-c", _FIND_VERSION_PY], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    path = out.stdout.strip() if out.returncode == 0 else ""
    return read_version_py(path) if path else ""


def job_python(command):
    """The Python a `record` command runs: `python ...`, `python3.11 ...`, a path
    to one, or a Python program by its `#!` line (torchrun, accelerate, a
    `./train.py`); None otherwise."""
    if not command:
        return None
    first = command[0]
    path = first if "/" in first else shutil.which(first)
    if re.fullmatch(r"python[0-9.]*", os.path.basename(first)):
        return path
    try:
        with open(path or "", "rb") as f:
            line = f.readline(512)
    except OSError:
        return None
    m = re.match(rb"#!\s*(\S+)(?:\s+(\S+))?", line)
    if not m:
        return None
    interpreter = os.fsdecode(m.group(1))
    if os.path.basename(interpreter) == "env" and m.group(2):  # #!/usr/bin/env python3
        interpreter = shutil.which(os.fsdecode(m.group(2))) or ""
    return interpreter if re.fullmatch(r"python[0-9.]*", os.path.basename(interpreter)) else None


def record_command(args):
    """The job's command line of `record ... -- CMD ...`, or None."""
    if not args or args[0] != "record" or "--" not in args:
        return None
    return args[args.index("--") + 1:]


def ensure_torch_plugin(binary, args, err=sys.stderr):
    """Before `record ... -- python ...`: the plugin for that Python's torch."""
    command = record_command(args)
    python = job_python(command) if command else None
    if python:
        ensure_for_python(binary, python, "this job is recorded", err)


def ensure_for_python(binary, python, what, err=sys.stderr):
    """Builds the torch plugin for `python`'s torch into the cache unless it is
    there (once per torch version). Never stops the caller: when the build
    cannot run it says why in one line and `what` goes on without torch ops.
    Returns whether the cache holds the plugin."""
    if os.environ.get("GPUSCOPE_TORCH_PLUGIN"):
        return True
    version = torch_version(python)
    cache = cache_dir()
    if not version or not cache:
        return False
    if os.path.exists(os.path.join(cache, "torch", folder_name(version), "libgpuscope_torch.so")):
        return True
    err.write("gpuscope: first use with torch %s: building the torch plugin (gpuscope setup torch --python %s)\n"
              % (version, python))
    err.flush()
    done = subprocess.run([binary, "setup", "torch", "--python", python], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        lines = [l for l in (done.stderr + done.stdout).splitlines() if l.strip()]
        why = lines[-1] if lines else "exit code %d" % done.returncode
        err.write("gpuscope: the torch plugin could not be built, so %s without torch ops: %s\n"
                  % (what, why.replace("gpuscope: error: ", "")))
        err.flush()
        return False
    return True
