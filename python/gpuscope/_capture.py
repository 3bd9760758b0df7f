"""`gpuscope.profile` through the collector's C API for captures in its own
process (collector/ondemand_api.h, docs/on-demand.md):
    int gpuscope_attach(void);
    int gpuscope_capture_start(const char* path, int steps, double seconds, char* err, size_t errlen);
    int gpuscope_capture_stop(char* err, size_t errlen);
    int gpuscope_capture_state(void);
0 is success; -1 leaves in `err` the one line the CLI would print. The
collector already in the process (`gpuscope record --on-demand`, LD_PRELOAD)
is used when its symbols are visible; otherwise the wheel's collector is
loaded now and attached (dormant until the first capture)."""
import ctypes
import math
import numbers
import os
import sys

from gpuscope._native import GpuscopeError, collector

_ERRLEN = 1024
# gpuscope_capture_state_code
UNAVAILABLE, DORMANT, WAITING, CONTROL, TRACING, FINISHING = -1, 0, 1, 2, 3, 4
_lib = None


def _has_api(lib):
    try:
        lib.gpuscope_capture_start  # noqa: B018 (a lookup that raises AttributeError when absent)
        return True
    except AttributeError:
        return False


def _loaded_collector():
    """The collector this process already has, or None."""
    try:
        lib = ctypes.CDLL(None)  # the global scope: the program and what LD_PRELOAD put there
        if _has_api(lib):
            return lib
    except OSError:
        pass
    try:  # loaded by someone else without RTLD_GLOBAL: reuse that copy, never a second one
        return ctypes.CDLL(collector(), mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
    except OSError:
        return None


# What `gpuscope trigger` accepts for --steps and --duration.
MAX_STEPS, MAX_SECONDS = 1000000, 86400


def _fail(text):
    # The collector's reasons begin "gpuscope_capture_start: ...": they get the CLI's prefix too.
    raise GpuscopeError(text if text.startswith("gpuscope: ") else "gpuscope: error: profile: " + text)


def check_request(path, steps, seconds):
    """The path as a str, or GpuscopeError in the words the CLI's options use."""
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or not 0 <= steps <= MAX_STEPS:
        _fail("steps: wants a whole number from 0 to %d, not %r" % (MAX_STEPS, steps))
    if (isinstance(seconds, bool) or not isinstance(seconds, numbers.Real) or not math.isfinite(seconds)
            or not 0 <= seconds <= MAX_SECONDS):
        _fail("seconds: wants a number from 0 to %d, not %r" % (MAX_SECONDS, seconds))
    try:
        name = os.fsdecode(path)
    except TypeError:
        _fail("the recording's path must be a str or os.PathLike, not %r" % (path,))
    if not name:
        _fail("the recording's path is empty (name the file to write, e.g. profile(\"run.db\"))")
    return name


def library():
    """The collector with the capture API, on demand in this process."""
    global _lib
    if _lib is not None:
        return _lib
    lib = _loaded_collector()
    if lib is None:
        path = collector()
        if not os.path.exists(path):
            _fail("the collector %s is not there (reinstall the gpuscope wheel or set GPUSCOPE_COLLECTOR)" % path)
        try:
            lib = ctypes.CDLL(path, mode=os.RTLD_GLOBAL)
        except OSError as e:
            _fail("cannot load the collector %s: %s" % (path, e))
    if not _has_api(lib):
        _fail("the collector in this process has no on-demand capture (gpuscope_capture_start): it is older than "
              "this gpuscope package; record with `gpuscope record -- python ...` instead")
    lib.gpuscope_capture_start.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_double, ctypes.c_char_p,
                                           ctypes.c_size_t]
    lib.gpuscope_capture_start.restype = ctypes.c_int
    lib.gpuscope_capture_stop.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    lib.gpuscope_capture_stop.restype = ctypes.c_int
    lib.gpuscope_capture_state.argtypes = []
    lib.gpuscope_capture_state.restype = ctypes.c_int
    lib.gpuscope_attach.argtypes = []
    lib.gpuscope_attach.restype = ctypes.c_int
    if lib.gpuscope_capture_state() == UNAVAILABLE and lib.gpuscope_attach() != 0:
        _fail("the collector already records this process (gpuscope record without --on-demand): its recording "
              "covers this code already")
    _lib = lib
    return lib


def attached():
    """Whether this package has already found or attached the collector."""
    return _lib is not None


def state():
    return library().gpuscope_capture_state()


def _check(rc, err, what):
    if rc != 0:
        _fail(err.value.decode("utf-8", "replace").strip() or "%s failed" % what)


def start(path, steps, seconds, control=True):
    """`steps` steps for analyze: the collector traces one more, because analyze
    leaves out the first traced step (it pays for the tracer starting, and after
    the control stretch for CUPTI resuming) and then analyses exactly `steps`."""
    lib = library()
    steps = steps + 1 if steps > 0 else 0
    err = ctypes.create_string_buffer(_ERRLEN)
    name = os.fsencode(os.path.abspath(path))
    if control:
        rc = lib.gpuscope_capture_start(name, int(steps), float(seconds), err, _ERRLEN)
    else:
        start_ex = lib.gpuscope_capture_start_ex
        start_ex.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_double, ctypes.c_int, ctypes.c_char_p,
                             ctypes.c_size_t]
        start_ex.restype = ctypes.c_int
        rc = start_ex(name, int(steps), float(seconds), 0, err, _ERRLEN)
    _check(rc, err, "gpuscope_capture_start")


def stop(path):
    """Ends the capture (if it has not ended by itself) and waits for its file.
    A capture still waiting for its first step boundary recorded nothing: its
    empty file is removed, as `gpuscope trigger` removes one, and one line says so."""
    lib = library()
    was = lib.gpuscope_capture_state()
    if was in (UNAVAILABLE, DORMANT):
        return  # it ended by itself, and its file is written
    err = ctypes.create_string_buffer(_ERRLEN)
    _check(lib.gpuscope_capture_stop(err, _ERRLEN), err, "gpuscope_capture_stop")
    if was == WAITING:
        name = os.path.abspath(path)
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.remove(name + suffix)
            except OSError:
                pass
        sys.stderr.write("gpuscope: warning: profile: no step ended inside the block (gpuscope.step(), an optimizer "
                         "step or a backward pass), so nothing was captured and %s was not written\n" % name)
    elif was == CONTROL:
        sys.stderr.write("gpuscope: warning: profile: the block ended inside the control stretch (the untraced steps "
                         "before the traced ones): %s holds no traced step\n" % os.path.abspath(path))
