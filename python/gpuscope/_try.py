"""`gpuscope try`'s hook inside the job (docs/try.md).

Loaded before the user's script by the sitecustomize.py that `gpuscope try`
puts first on PYTHONPATH (share/gpuscope/try/ in the archive and the wheel),
only when GPUSCOPE_TRY_DIR is set. It needs nothing but the standard library
and, once the script imports it, torch. It
- applies the fixes of GPUSCOPE_TRY (joined by '+') without a script edit:
  amp, channels-last, compile and cuda-graphs on the outermost nn.Module calls
  (a module call not nested in another), fused-optimizer on torch.optim
  Adam/AdamW/SGD, dataloader-stall and pageable-memcpy on DataLoaders;
- writes what it changed to GPUSCOPE_TRY_DIR/report-PID.json (rewritten whole
  whenever it changes; one per process of the job, never from DataLoader
  workers, so each rank of a torchrun job has its own);
- appends one line per step boundary (CLOCK_MONOTONIC ns) to
  GPUSCOPE_TRY_DIR/steps-PID.txt: gpuscope.step() calls when the script makes
  them, else the steps of its first optimizer (the torch plugin's rules).
Self-contained: the file is copied as share/gpuscope/try/gpuscope_try_hook.py."""
import importlib.abc
import importlib.util
import inspect
import json
import os
import sys
import threading
import time
import types

MODULE_FIXES = ("amp", "channels-last", "compile", "cuda-graphs")
LOADER_FIXES = ("dataloader-stall", "pageable-memcpy")
KNOWN = MODULE_FIXES + LOADER_FIXES + ("fused-optimizer",)
# What the replay prices that no hook can apply (analyzer/whatif/fixes.cpp).
NEEDS_CODE_CHANGE = ("host-sync",)


def parse_variant(text):
    """'amp+compile' -> ['amp', 'compile']; '' -> [] (the run as it is)."""
    return [f for f in (text or "").split("+") if f]


class Hook:
    def __init__(self, variant, folder):
        self.fixes = parse_variant(variant)
        self.folder = folder
        self.pid = os.getpid()
        self.lock = threading.Lock()
        # fix -> {"state": applied|unavailable|not-applied|needs-code-change, "said": str, "items": [...]}
        self.report = {f: {"state": "not-applied", "said": "", "items": []} for f in self.fixes}
        self.notes = []
        self.torch_version = ""
        self.torch = None
        self.gpu = ""
        self.device = ""
        self.step_source = None
        self.steps_fd = -1
        self.depth = 0
        self.modules = {}  # id(module) -> runner, for outermost modules already seen
        self.module_refs = []  # keeps the ids above valid
        self.loaders = 0
        self._compiling = lambda: False
        for f in self.fixes:
            if f in NEEDS_CODE_CHANGE:
                self._set(f, "needs-code-change", "%s: needs a code change (not applied)" % f)
            elif f not in KNOWN:
                self._set(f, "unavailable", "%s: unknown fix" % f)
        if folder:
            try:
                self.steps_fd = os.open(os.path.join(folder, "steps-%d.txt" % self.pid),
                                        os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
            except OSError as e:
                self.notes.append("steps not written: %s" % e)
        self.write()

    # ------------------------------------------------------------ report
    def _set(self, fix, state, said):
        entry = self.report[fix]
        entry["state"] = state
        entry["said"] = said

    def write(self):
        if not self.folder or os.getpid() != self.pid:
            return
        doc = {
            "variant": "+".join(self.fixes),
            "pid": self.pid,
            "torch": self.torch_version,
            "device": self.device,
            "gpu": self.gpu,
            "step_source": self.step_source or "",
            "fixes": [dict(fix=f, state=e["state"], said=e["said"], items=e["items"]) for f, e in self.report.items()],
            "notes": self.notes,
        }
        path = os.path.join(self.folder, "report-%d.json" % self.pid)
        tmp = path + ".%d.tmp" % self.pid
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            os.replace(tmp, path)
        except OSError:
            pass

    def applied(self, fix, item, said):
        """One more module or loader changed by `fix`; `said` builds the line from the items."""
        entry = self.report[fix]
        entry["items"].append(item)
        entry["state"] = "applied"
        entry["said"] = said(entry["items"])
        self.write()

    # ------------------------------------------------------------ steps
    def boundary(self, source):
        if self.steps_fd < 0 or os.getpid() != self.pid:
            return
        if self.step_source is None:
            self.step_source = source
            self.gpu = self._gpu_name()
            self.write()
        elif source != self.step_source:
            if source != "gpuscope.step":
                return
            self.step_source = source  # gpuscope.step() decides, as for the torch plugin
            self.write()
        try:
            os.write(self.steps_fd, b"%d\n" % time.monotonic_ns())
        except OSError:
            pass

    def _gpu_name(self):
        """The GPU's name once the job has initialized CUDA itself (never initialized here)."""
        try:
            cuda = self.torch.cuda
            return cuda.get_device_name(cuda.current_device()) if cuda.is_initialized() else ""
        except Exception:
            return ""

    # ------------------------------------------------------------ torch
    def on_torch(self, torch):
        self.torch_version = str(getattr(torch, "__version__", ""))
        self.torch = torch
        self._patch_optimizer_steps(torch)
        if "fused-optimizer" in self.report:
            self._patch_fused(torch)
        if any(f in self.report for f in LOADER_FIXES):
            self._patch_loaders(torch)
        wanted = [f for f in MODULE_FIXES if f in self.report]
        for f in ("compile", "cuda-graphs"):
            if f in wanted and not hasattr(torch, "compile"):
                self._set(f, "unavailable", "%s: not available on torch %s (torch.compile needs torch 2.0)"
                          % (f, self.torch_version))
                wanted.remove(f)
        if wanted:
            self._patch_module_calls(torch, wanted)
        self.write()

    def on_gpuscope(self, module):
        original = getattr(module, "step", None)
        if original is None or getattr(original, "_gpuscope_try", False):
            return
        hook = self

        def step(*args, **kwargs):
            result = original(*args, **kwargs)
            hook.boundary("gpuscope.step")
            return result

        step._gpuscope_try = True
        step.__doc__ = original.__doc__
        module.step = step

    def _patch_optimizer_steps(self, torch):
        hook = self
        first = []

        def after_step(optimizer):
            if not first:
                first.append(id(optimizer))
            if first[0] == id(optimizer):
                hook.boundary("optimizer.step")

        register = getattr(getattr(torch.optim, "optimizer", None), "register_optimizer_step_post_hook", None)
        if register is not None:
            register(lambda optimizer, args, kwargs: after_step(optimizer))
            return
        # torch < 2.0: each optimizer's step, as an instance method, so that
        # lr_scheduler's own wrapping of optimizer.step still works.
        Optimizer = torch.optim.Optimizer
        original_init = Optimizer.__init__

        def __init__(self, *args, **kwargs):
            original_init(self, *args, **kwargs)
            if "step" in self.__dict__:
                return
            cls_step = type(self).step

            def counted(opt, *a, **k):
                result = cls_step(opt, *a, **k)
                after_step(opt)
                return result

            self.step = types.MethodType(counted, self)

        Optimizer.__init__ = __init__

    def _patch_fused(self, torch):
        hook = self
        classes = [getattr(torch.optim, n) for n in ("Adam", "AdamW", "SGD") if hasattr(torch.optim, n)]
        fix = "fused-optimizer"
        if not any("fused" in inspect.signature(c.__init__).parameters for c in classes):
            self._set(fix, "unavailable", "%s: not supported by this torch (%s: no fused= in torch.optim)"
                      % (fix, self.torch_version))
            return

        def said(items):
            return "%s: fused=True for %s, %d optimizer%s" % (fix, ", ".join(items), len(items),
                                                               "" if len(items) == 1 else "s")

        for cls in classes:
            if "fused" not in inspect.signature(cls.__init__).parameters:
                continue
            original = cls.__init__

            def __init__(self, *args, _original=original, _cls=cls, **kwargs):
                if type(self) is not _cls or kwargs.get("fused") or kwargs.get("foreach"):
                    return _original(self, *args, **kwargs)
                params = list(args[0]) if args else list(kwargs.pop("params", []))
                rest = args[1:]
                try:
                    _original(self, params, *rest, **dict(kwargs, fused=True))
                except (RuntimeError, ValueError, TypeError) as e:
                    why = str(e).splitlines()[0] if str(e) else type(e).__name__
                    hook._set(fix, "unavailable", "%s: not supported by this torch for these parameters (%s)"
                              % (fix, why))
                    hook.write()
                    return _original(self, params, *rest, **kwargs)
                hook.applied(fix, _cls.__name__, said)

            cls.__init__ = __init__

    def _patch_loaders(self, torch):
        hook = self
        DataLoader = torch.utils.data.DataLoader
        original = DataLoader.__init__
        signature = inspect.signature(original)
        cuda = torch.cuda.is_available()
        try:
            cpus = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cpus = os.cpu_count() or 1
        workers = max(1, min(8, cpus - 1))
        if "pageable-memcpy" in self.report and not cuda:
            self._set("pageable-memcpy", "unavailable", "pageable-memcpy: no CUDA in this process, nothing to pin")

        def __init__(self, *args, **kwargs):
            try:
                bound = signature.bind(self, *args, **kwargs)
            except TypeError:
                return original(self, *args, **kwargs)
            a = bound.arguments
            dataset = a.get("dataset")
            changes = []
            if "dataloader-stall" in hook.report:
                if isinstance(dataset, torch.utils.data.IterableDataset):
                    hook.notes.append("dataloader-stall: an IterableDataset's loader left alone (each worker "
                                      "would yield the whole dataset)")
                else:
                    if a.get("num_workers", 0) == 0:
                        a["num_workers"] = workers
                        changes.append("num_workers 0->%d" % workers)
                    if "persistent_workers" in signature.parameters and not a.get("persistent_workers"):
                        a["persistent_workers"] = True
                        changes.append("persistent_workers")
                    if "prefetch_factor" in signature.parameters and a.get("prefetch_factor") in (None, 2):
                        a["prefetch_factor"] = 4
                        changes.append("prefetch_factor 4")
                    if cuda and not a.get("pin_memory"):
                        a["pin_memory"] = True
                        changes.append("pin_memory")
            if "pageable-memcpy" in hook.report and cuda and not a.get("pin_memory"):
                a["pin_memory"] = True
                changes.append("pin_memory")
            original(*bound.args, **bound.kwargs)
            if changes:
                hook.loaders += 1
                for fix in LOADER_FIXES:
                    if fix in hook.report and hook.report[fix]["state"] != "unavailable":
                        mine = [c for c in changes if fix == "dataloader-stall" or c == "pin_memory"]
                        if mine:
                            hook.applied(fix, "DataLoader(%s)" % ", ".join(mine),
                                         lambda items, fix=fix: "%s: %s, %d loader%s" % (
                                             fix, "; ".join(sorted(set(items))), len(items),
                                             "" if len(items) == 1 else "s"))

        DataLoader.__init__ = __init__

    def _patch_module_calls(self, torch, wanted):
        hook = self
        Module = torch.nn.Module
        original_call = Module.__call__
        compiler = getattr(torch, "compiler", None)
        if compiler is not None and hasattr(compiler, "is_compiling"):
            self._compiling = compiler.is_compiling
        elif hasattr(torch, "compile"):
            try:
                from torch._dynamo import is_compiling  # torch 2.0-2.2
                self._compiling = is_compiling
            except ImportError:
                pass
        compiling = self._compiling

        def __call__(module, *args, **kwargs):
            if compiling() or hook.depth:
                return original_call(module, *args, **kwargs)
            runner = hook.modules.get(id(module))
            if runner is None:
                runner = hook._runner(torch, module, wanted, original_call)
            hook.depth = 1
            try:
                return runner(module, args, kwargs)
            finally:
                hook.depth = 0

        Module.__call__ = __call__

    def _runner(self, torch, module, wanted, original_call):
        """How an outermost call of `module` runs with the fixes, decided at its first call."""
        plain = lambda m, args, kwargs: original_call(m, *args, **kwargs)  # noqa: E731
        params = list(module.parameters())
        in_worker = torch.utils.data.get_worker_info() is not None
        if not params or in_worker:
            self.modules[id(module)] = plain
            self.module_refs.append(module)
            return plain
        name = type(module).__name__ + ".forward"
        device = params[0].device.type
        if not self.device:
            self.device = device
        call = plain
        if "channels-last" in wanted:
            if any(p.dim() == 4 for p in params):
                module.to(memory_format=torch.channels_last)
                fmt = torch.channels_last

                def to_cl(v):
                    return v.contiguous(memory_format=fmt) if isinstance(v, torch.Tensor) and v.dim() == 4 else v

                def call(m, args, kwargs, inner=call):
                    return inner(m, tuple(to_cl(a) for a in args), {k: to_cl(v) for k, v in kwargs.items()})

                self.applied("channels-last", type(module).__name__,
                             lambda items: "channels-last: %s and the 4-D inputs of %s, %d module%s" % (
                                 ", ".join(items), "its calls" if len(items) == 1 else "their calls", len(items),
                                 "" if len(items) == 1 else "s"))
            else:
                self.notes.append("channels-last: %s has no 4-D weights, left as it is" % type(module).__name__)
        for fix, mode in (("compile", None), ("cuda-graphs", "reduce-overhead")):
            if fix not in wanted or self.report[fix]["state"] == "unavailable":
                continue
            if mode is not None and device != "cuda":
                self._set(fix, "unavailable", "%s: %s runs on %s (CUDA graphs need CUDA)" % (fix, name, device))
                self.write()
                continue
            compiled = torch.compile(module) if mode is None else torch.compile(module, mode=mode)

            def call(m, args, kwargs, inner=call, compiled=compiled):
                return inner(compiled, args, kwargs)

            what = "torch.compile(%s)" if mode is None else 'torch.compile(%s, mode="reduce-overhead"): compile and CUDA graphs'
            self.applied(fix, name, lambda items, what=what, fix=fix: "%s: %s, %d module%s" % (
                fix, what % ", ".join(items), len(items), "" if len(items) == 1 else "s"))
            break  # cuda-graphs includes compile
        if "amp" in wanted:
            dtype = torch.bfloat16

            def call(m, args, kwargs, inner=call, device=device):
                with torch.autocast(device_type=device, dtype=dtype):
                    return inner(m, args, kwargs)

            self.applied("amp", name + " (%s)" % device, lambda items: "amp: autocast bfloat16 around %s, %d module%s"
                         % (", ".join(items), len(items), "" if len(items) == 1 else "s"))
        self.modules[id(module)] = call
        self.module_refs.append(module)
        return call


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs a function on a module right after it is imported (torch, gpuscope)."""

    def __init__(self, actions):
        self.actions = dict(actions)

    def find_spec(self, name, path=None, target=None):
        action = self.actions.get(name)
        if action is None:
            return None
        del self.actions[name]
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        original = loader.exec_module

        def exec_module(module):
            original(module)
            try:
                action(module)
            except Exception as e:  # a failed patch must never stop the job
                sys.stderr.write("gpuscope try: hook: %s: %s\n" % (name, e))

        loader.exec_module = exec_module
        return spec


_hook = None


def install(variant, folder):
    """Called by sitecustomize.py at interpreter start-up."""
    global _hook
    if _hook is not None:
        return _hook
    _hook = Hook(variant, folder)
    actions = {"torch": _hook.on_torch, "gpuscope": _hook.on_gpuscope}
    for name, action in list(actions.items()):
        if name in sys.modules:  # imported already (cannot happen from sitecustomize, but install() is public)
            action(sys.modules[name])
            del actions[name]
    if actions:
        sys.meta_path.insert(0, _AfterImport(actions))
    return _hook
