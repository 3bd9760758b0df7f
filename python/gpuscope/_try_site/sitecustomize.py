"""Loads `gpuscope try`'s hook into the job (docs/try.md): `gpuscope try` puts
this folder first on PYTHONPATH and sets GPUSCOPE_TRY (the variant) and
GPUSCOPE_TRY_DIR (where the hook reports). The hook is gpuscope_try_hook.py
beside this file (the archive's share/gpuscope/try/), else the package's
_try.py one folder up (the source tree). A sitecustomize the job had before
runs after it, as it would have without gpuscope."""
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))


def _load_hook():
    for path in (os.path.join(_here, "gpuscope_try_hook.py"), os.path.join(os.path.dirname(_here), "_try.py")):
        if os.path.exists(path):
            spec = importlib.util.spec_from_file_location("_gpuscope_try_hook", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules["_gpuscope_try_hook"] = module
            spec.loader.exec_module(module)
            return module
    raise ImportError("gpuscope try: its hook is missing beside %s" % _here)


def _chain():
    """The job's own sitecustomize, if it has one further down sys.path."""
    me = sys.modules.get("sitecustomize")
    rest = [p for p in sys.path if os.path.abspath(p or ".") != _here]
    for entry in rest:
        candidate = os.path.join(entry or ".", "sitecustomize.py")
        if os.path.exists(candidate):
            spec = importlib.util.spec_from_file_location("sitecustomize", candidate)
            module = importlib.util.module_from_spec(spec)
            sys.modules["sitecustomize"] = module
            try:
                spec.loader.exec_module(module)
            finally:
                sys.modules["sitecustomize"] = me
            return


if os.environ.get("GPUSCOPE_TRY_DIR"):
    try:
        _load_hook().install(os.environ.get("GPUSCOPE_TRY", ""), os.environ["GPUSCOPE_TRY_DIR"])
    except Exception as e:  # the job runs on, unhooked; try reports no steps
        sys.stderr.write("gpuscope try: hook not loaded: %s\n" % e)
_chain()
