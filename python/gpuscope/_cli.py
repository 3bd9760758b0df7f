"""The `gpuscope` command of the wheel: runs the bundled binary with the same
arguments, after building the torch plugin on first use for `record`."""
import os
import sys

from gpuscope._native import GpuscopeError, binary
from gpuscope._plugin import ensure_torch_plugin


def main():
    args = sys.argv[1:]
    try:
        exe = binary()
    except GpuscopeError as e:
        sys.stderr.write("%s\n" % e)
        return 2
    # Outside an activated venv, python3 on PATH is another Python: doctor and
    # setup torch look at the one this command belongs to unless told otherwise.
    if (args[:1] == ["doctor"] or args[:2] == ["setup", "torch"]) and not any(
            a == "--python" or a.startswith("--python=") for a in args):
        args = args + ["--python", sys.executable]
    ensure_torch_plugin(exe, args)
    os.execv(exe, ["gpuscope"] + args)


if __name__ == "__main__":
    sys.exit(main())
