"""Where the wheel keeps gpuscope's programs: the release archive's layout
(bin/gpuscope, lib/gpuscope/libgpuscope_collector.so, share/gpuscope/torch-plugin)
under gpuscope/_native, so the binary finds the collector, the viewer and the
plugin sources relative to itself exactly as it does in the archive."""
import os

NATIVE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_native")


class GpuscopeError(RuntimeError):
    """A gpuscope failure, with the one-line message the CLI prints."""


def binary():
    """The bundled `gpuscope` program."""
    path = os.path.join(NATIVE, "bin", "gpuscope")
    if not os.access(path, os.X_OK):
        raise GpuscopeError("gpuscope: error: %s is missing or not executable (reinstall the gpuscope wheel)" % path)
    return path


def collector():
    """The bundled collector library, as `gpuscope record` finds it (GPUSCOPE_COLLECTOR first)."""
    env = os.environ.get("GPUSCOPE_COLLECTOR")
    if env:
        return env
    return os.path.join(os.path.dirname(os.path.dirname(binary())), "lib", "gpuscope", "libgpuscope_collector.so")
