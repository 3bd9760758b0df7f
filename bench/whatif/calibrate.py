#!/usr/bin/env python3
"""Measure gpuscope's what-if calibration table on this GPU (schema "gpuscope-calibration/1").

Usage: python3 bench/whatif/calibrate.py --out FILE [--seconds 85] [--device cuda|cpu] [--quick]

Kernel ratios (curves) are measured per class of kernel with torch.profiler (CUDA
activity only): each form of the work runs warm, then 3 repetitions of a loop of
>= 2 ms inside one profiler session (separated by 3 ms sleeps); the device events
are split into repetitions, the kernels whose lower-cased names match the class
patterns are summed per iteration, ratio = median(new) / median(base), lo/hi the
smallest/largest per-repetition ratio, x = the base form's mean time per kernel of
the class (us).  CPU costs use perf_counter, GPU costs CUDA events.
Every entry is guarded: a failure goes to "errors", an entry that the --seconds
budget (counted from process start) cannot reach goes to "skipped"; the JSON is
rewritten (atomically) after every entry and on SIGTERM.  --device cpu --quick
runs the whole script on the CPU with tiny sizes (CUDA-only entries skipped): a
smoke test of the code, not a calibration.  See bench/whatif/README.md.
"""
import time

T0 = time.monotonic()

import argparse  # noqa: E402
import contextlib  # noqa: E402
import copy  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from calibrate_costs import CostSections  # noqa: E402
from calibrate_kernels import KernelSections, Skip, sig  # noqa: E402
try:
    from check_calibration import CURVES, COSTS, SCHEMA, validate
except Exception:  # the checker is beside this file; keep going without it
    SCHEMA, CURVES, COSTS, validate = "gpuscope-calibration/1", {}, {}, None

# Kernel classes: lower-cased substring match, the same as the C++ side (analyzer).
# Norm curves count every kernel of the norm's forward and backward ("all"): in
# channels_last torch's group norm adds layout copies, which are the slowdown.
CONV_PAT = ("conv", "fprop", "dgrad", "wgrad", "winograd", "scudnn", "implicit")
TRANSPOSE_PAT = ("nchwtonhwc", "nhwctonchw", "nchw2nhwc", "nhwc2nchw")
GEMM_PAT = ("gemm", "gemv", "nvjet", "cutlass", "xmma", "wgmma", "hmma", "matmul")
CLASS_PAT = {
    "batchnorm": ("batch_norm", "bn_fw", "bn_bw", "cudnn::bn_"),
    "groupnorm": ("group_norm", "groupnorm"),
    "layernorm": ("layer_norm", "layernorm"),
    "elementwise": ("elementwise",),
    "rnn": ("lstm", "rnn", "elemwise"),
}
# --device cpu only: CPU op names standing in for kernel names (a smoke test).
CPU_ALIAS = {"gemm": ("addmm", "aten::mm", "aten::bmm", "aten::linear"),
             "elementwise": ("aten::add", "aten::mul", "gelu", "relu", "threshold", "aten::sub")}


def kclass_match(cls, lname, cpu=False):
    """Does the lower-cased kernel name lname belong to class cls?"""
    if cls == "all":
        return True
    if cls == "transpose":
        return any(p in lname for p in TRANSPOSE_PAT)
    if cls == "conv":
        return any(p in lname for p in CONV_PAT) and not any(p in lname for p in TRANSPOSE_PAT)
    if cls == "gemm":
        hit = any(p in lname for p in GEMM_PAT) or (cpu and any(p in lname for p in CPU_ALIAS["gemm"]))
        return hit and not any(p in lname for p in CONV_PAT)
    pats = CLASS_PAT[cls] + (CPU_ALIAS.get(cls, ()) if cpu else ())
    return any(p in lname for p in pats)


def clean(o):
    """JSON-safe copy: non-finite floats -> None."""
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {str(k): clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [clean(v) for v in o]
    return o


class FormRun:
    """Device events of one form of the work: groups[r] = [(lname, dur_us), ...] per repetition."""

    def __init__(self, groups, iters, label=""):
        self.groups, self.iters, self.label = groups, iters, label

    def stats(self, cls, cpu=False):
        per_rep, n, tot = [], 0, 0.0
        for g in self.groups:
            s = 0.0
            for name, d in g:
                if kclass_match(cls, name, cpu):
                    s += d
                    n += 1
            per_rep.append(s / self.iters)
            tot += s
        return {"per_iter": per_rep, "count": n, "total": tot,
                "mean_kernel": tot / n if n else None,
                "kernels_per_iter": n / (self.iters * max(1, len(self.groups)))}

    def top_names(self, k=4):
        agg = {}
        for g in self.groups:
            for name, d in g:
                agg[name] = agg.get(name, 0.0) + d
        return [n[:110] for n, _ in sorted(agg.items(), key=lambda t: -t[1])[:k]]


class Calibrator(CostSections, KernelSections):
    def __init__(self, args):
        import torch
        self.torch = torch
        self.args = args
        self.cuda = args.device == "cuda"
        self.quick = args.quick
        self.dev = torch.device("cuda" if self.cuda else "cpu")
        self.ac_dev = "cuda" if self.cuda else "cpu"
        self.min_s = 0.002          # each timing loop lasts >= 2 ms
        self.reps = 3
        self.max_iters = 400
        self.write_n = 0
        if self.cuda:
            name = torch.cuda.get_device_name(0)
            props = torch.cuda.get_device_properties(0)
            sm = props.multi_processor_count
        else:
            name, sm = "cpu " + (platform.processor() or platform.machine()), None
        match = "H100" if "H100" in name else "H200" if "H200" in name else name
        self.out = {
            "schema": SCHEMA, "device": name, "match": match, "sm_count": sm,
            "torch": torch.__version__, "cuda": torch.version.cuda,
            "date": datetime.date.today().isoformat(),
            "command": "python3 " + " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:]),
            "seconds_budget": args.seconds, "quick": bool(args.quick),
            "peaks": {}, "curves": {}, "costs": {}, "errors": {}, "skipped": [],
            "skip_reasons": {}, "notes": {}, "elapsed_s": None,
        }
        if self.cuda:
            # Defaults as torch ships (stated explicitly): matmul TF32 off, cuDNN TF32 on, no benchmark.
            torch.set_float32_matmul_precision("highest")
            torch.backends.cudnn.benchmark = False
            if not getattr(torch.backends.cudnn, "allow_tf32", True):
                self.out["notes"]["cudnn_allow_tf32"] = "was False; left as found"

    # ---- bookkeeping --------------------------------------------------------------------------
    def elapsed(self):
        return time.monotonic() - T0

    def left(self):
        return self.args.seconds - self.elapsed()

    def write(self, killed=None):
        self.out["elapsed_s"] = round(self.elapsed(), 2)
        if killed:
            self.out["killed"] = killed
        for c in self.out["curves"].values():       # keep points sorted by x (with their details)
            if len(c["points"]) != len(c["detail"]):
                continue                               # mid-append (a signal): leave as is
            order = sorted(range(len(c["points"])), key=lambda i: c["points"][i][0])
            c["points"] = [c["points"][i] for i in order]
            c["detail"] = [c["detail"][i] for i in order]
        self.write_n += 1
        tmp = f"{self.args.out}.tmp{os.getpid()}.{self.write_n}"
        text = json.dumps(clean(self.out), indent=1)
        # lists of scalars (points, top names) on one line each
        text = re.sub(r"\[[^\[\]{}]*\]", lambda m: re.sub(r"\s*\n\s*", " ", m.group(0)).replace("[ ", "[").replace(" ]", "]"), text)
        with open(tmp, "w") as f:
            f.write(text + "\n")
        os.replace(tmp, self.args.out)

    def log(self, msg):
        print(f"[{self.elapsed():6.1f}s] {msg}", flush=True)

    def entry(self, name, fn, est=1.0, cuda_only=False):
        """Run one guarded entry: budget check, try/except, JSON rewrite."""
        if cuda_only and not self.cuda:
            self.skip(name, "cuda only")
            return
        if self.left() < est:
            self.skip(name, f"budget: {self.left():.1f}s left, entry needs ~{est:.0f}s")
            return
        t = time.monotonic()
        try:
            fn()
            self.log(f"{name}: ok ({time.monotonic() - t:.2f}s)")
        except Skip as e:
            self.skip(name, str(e))
        except Exception as e:  # noqa: BLE001 - record and go on
            msg = f"{type(e).__name__}: {e}".strip()
            tb = traceback.extract_tb(e.__traceback__)
            if tb:
                msg += f" (at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno})"
            self.out["errors"][name] = msg[:600]
            self.log(f"{name}: ERROR {msg[:200]}")
            with contextlib.suppress(Exception):
                self.sync()
        try:
            self.write()
        except Exception as e:  # noqa: BLE001
            self.log(f"cannot write {self.args.out}: {e}")

    def skip(self, name, why):
        self.out["skipped"].append(name)
        self.out["skip_reasons"][name] = why
        self.log(f"{name}: skipped ({why})")

    def free(self):
        gc.collect()
        if self.cuda:
            with contextlib.suppress(Exception):
                self.torch.cuda.empty_cache()

    # ---- timing primitives ---------------------------------------------------------------------
    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def autocast(self):
        return self.torch.autocast(device_type=self.ac_dev, dtype=self.torch.bfloat16)

    def gpu_ms(self, fn, iters):
        """Mean device time per call (CUDA events; perf_counter on the CPU)."""
        torch = self.torch
        if self.cuda:
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(iters):
                fn()
            e1.record()
            e1.synchronize()
            return e0.elapsed_time(e1) / iters
        t = time.perf_counter()
        for _ in range(iters):
            fn()
        return (time.perf_counter() - t) * 1e3 / iters

    def iters_for(self, fn, min_s=None):
        """Warm fn up and return the iterations that make a loop last >= min_s."""
        min_s = min_s or self.min_s
        fn()
        self.sync()
        fn()
        self.sync()
        t = time.perf_counter()
        fn()
        self.sync()
        dt = max(time.perf_counter() - t, 1e-7)
        return max(1, min(self.max_iters, math.ceil(min_s / dt)))

    def device_events(self, prof):
        """[(start_us, dur_us, lname)] of device (CPU op, for --device cpu) events, by start."""
        torch = self.torch
        dtype_enum = getattr(torch.autograd, "DeviceType", None) or torch._C._autograd.DeviceType
        want = dtype_enum.CUDA if self.cuda else dtype_enum.CPU
        evs = []
        raw = None
        with contextlib.suppress(Exception):
            raw = prof.profiler.kineto_results.events()
        if raw is not None:
            for e in raw:
                if e.device_type() != want:
                    continue
                try:
                    st, du = e.start_ns() / 1e3, e.duration_ns() / 1e3
                except AttributeError:
                    st, du = float(e.start_us()), float(e.duration_us())
                evs.append((st, du, e.name().lower()))
        else:  # slower path through FunctionEvents
            for fe in prof.events():
                if fe.device_type != want:
                    continue
                evs.append((fe.time_range.start, fe.time_range.elapsed_us(), fe.name.lower()))
        evs.sort(key=lambda t: t[0])
        return evs

    def split_reps(self, evs, reps):
        """Split time-ordered events into repetitions: by the reps-1 largest idle gaps when they
        stand out (3 ms sleeps separate repetitions), else in equal counts, else one group."""
        if reps <= 1 or len(evs) < reps:
            return [evs]
        gaps, end = [], None
        for i, (st, du, _) in enumerate(evs):
            if end is not None:
                gaps.append((st - end, i))
            end = st + du if end is None else max(end, st + du)
        gaps.sort(reverse=True)
        top = gaps[:reps - 1]
        rest = gaps[reps - 1][0] if len(gaps) >= reps else 0.0
        if len(top) == reps - 1 and top[-1][0] >= 1500.0 and rest < 1000.0:
            cuts = sorted(i for _, i in top)
            bounds = [0] + cuts + [len(evs)]
            return [evs[bounds[j]:bounds[j + 1]] for j in range(reps)]
        if len(evs) % reps == 0:
            k = len(evs) // reps
            return [evs[j * k:(j + 1) * k] for j in range(reps)]
        return [evs]

    def profile_form(self, fn, label="", iters=None, reps=None):
        """Warm fn, then profile reps x iters calls; FormRun of device kernels."""
        torch = self.torch
        reps = reps or self.reps
        if iters is None:
            iters = self.iters_for(fn)
        act = torch.profiler.ProfilerActivity.CUDA if self.cuda else torch.profiler.ProfilerActivity.CPU
        self.sync()
        with torch.profiler.profile(activities=[act]) as prof:
            for r in range(reps):
                for _ in range(iters):
                    fn()
                self.sync()
                if r < reps - 1:
                    time.sleep(0.003)
        evs = self.device_events(prof)
        del prof
        if not evs:
            raise RuntimeError(f"profiler saw no device events ({label})")
        groups = self.split_reps(evs, reps)
        return FormRun([[(n, d) for _, d, n in g] for g in groups], iters * (reps if len(groups) == 1 else 1), label)

    # ---- results -------------------------------------------------------------------------------
    def curve(self, cid, what):
        c = self.out["curves"].get(cid)
        if c is None:
            c = self.out["curves"][cid] = {"what": what, "points": [], "detail": []}
        return c

    def add_point(self, cid, what, label, base, new, cls, x=None, fallback=None):
        """Point [x, ratio, lo, hi] of curve cid from two FormRuns, class cls."""
        cpu = not self.cuda
        used = cls
        b, n = base.stats(cls, cpu), new.stats(cls, cpu)
        if (not b["count"] or not n["count"]) and fallback:
            used = fallback
            b, n = base.stats(fallback, cpu), new.stats(fallback, cpu)
        if not b["count"] or not n["count"]:
            raise RuntimeError(f"no '{cls}' kernels in {'base' if not b['count'] else 'new'} form; "
                               f"base top: {base.top_names()}; new top: {new.top_names()}")
        mb, mn = statistics.median(b["per_iter"]), statistics.median(n["per_iter"])
        if mb <= 0 or mn <= 0:
            raise RuntimeError(f"zero kernel time (base {mb}, new {mn})")
        ratio = mn / mb
        pairs = [nn / bb for bb, nn in zip(b["per_iter"], n["per_iter"]) if bb > 0 and nn > 0]
        lo, hi = min(pairs + [ratio]), max(pairs + [ratio])
        xv = b["mean_kernel"] if x is None else x
        c = self.curve(cid, what)
        c["points"].append([sig(xv), sig(ratio), sig(lo), sig(hi)])
        ab, an = base.stats("all", cpu), new.stats("all", cpu)
        d = {"shape": label, "base_us_per_iter": sig(mb), "new_us_per_iter": sig(mn),
             "base_kernels_per_iter": sig(b["kernels_per_iter"]), "new_kernels_per_iter": sig(n["kernels_per_iter"]),
             "class_share_base": sig(mb / statistics.median(ab["per_iter"])) if statistics.median(ab["per_iter"]) > 0 else None,
             "class_share_new": sig(mn / statistics.median(an["per_iter"])) if statistics.median(an["per_iter"]) > 0 else None,
             "base_top": base.top_names(3), "new_top": new.top_names(3)}
        if used != cls:
            d["class"] = f"{used} (no '{cls}' kernel matched)"
        c["detail"].append(d)
        return ratio

    def cost(self, cid, values, what=None, unit=None, **extra):
        vals = [v for v in values if v is not None and math.isfinite(v)]
        if not vals:
            raise RuntimeError(f"{cid}: no values")
        unit = unit or COSTS.get(cid, ("us",))[0]
        what = what or COSTS.get(cid, ("", cid))[1]
        med = statistics.median(vals)
        self.out["costs"][cid] = dict({"value": sig(med), "lo": sig(min(vals)), "hi": sig(max(vals)),
                                       "unit": unit, "what": what}, **extra)
        return med

    # ---- helpers to build fwd+bwd steps ----------------------------------------------------------
    def fwd_bwd(self, fwd, leaves, ac=False):
        """Step: clear grads of `leaves`, y = fwd() (inside autocast if ac), y.backward(g)."""
        ctx = self.autocast if ac else contextlib.nullcontext
        with ctx():
            y0 = fwd()
        g = self.torch.randn_like(y0)
        del y0

        def step():
            for t in leaves:
                t.grad = None
            with ctx():
                y = fwd()
            y.backward(g)
        return step

    # =============================================================================================
    # sections
    # =============================================================================================
    def run(self):
        sections = [
            ("peaks", self.sec_peaks),
            ("cpu costs", self.sec_cpu_costs),
            ("graph costs", self.sec_graph_costs),
            ("copies", self.sec_copies),
            ("gemm", self.sec_gemm),
            ("conv", self.sec_conv),
            ("elementwise", self.sec_elementwise),
            ("norms", self.sec_norms),
            ("optimizer", self.sec_optimizer),
            ("compile", self.sec_compile),
            ("rnn", self.sec_rnn),
            ("dataloader", self.sec_dataloader),
        ]
        for name, fn in sections:
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - a section's own setup failed
                self.out["errors"][f"section {name}"] = f"{type(e).__name__}: {e}"[:600]
                self.log(f"section {name}: ERROR {e}")
            self.free()
            self.write()

    # ---- peaks ---------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output JSON file")
    ap.add_argument("--seconds", type=float, default=85.0, help="budget from process start (default 85)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a smoke test)")
    args = ap.parse_args()

    cal = None

    def on_term(signum, frame):
        if cal is not None:
            with contextlib.suppress(Exception):
                cal.write(killed=f"signal {signum} at {time.monotonic() - T0:.1f}s")
        sys.stdout.flush()
        os._exit(128 + signum)
    signal.signal(signal.SIGTERM, on_term)

    try:
        cal = Calibrator(args)
        if cal.cuda and not cal.torch.cuda.is_available():
            raise RuntimeError("CUDA not available (use --device cpu --quick for a smoke test)")
        cal.log(f"device {cal.out['device']} (match {cal.out['match']}), torch {cal.out['torch']}, "
                f"budget {args.seconds:.0f}s, out {args.out}")
        cal.write()
        cal.run()
    except Exception as e:  # noqa: BLE001
        if cal is None:
            doc = {"schema": SCHEMA, "device": "unknown", "match": "unknown", "sm_count": None, "torch": "unknown",
                   "cuda": None, "date": datetime.date.today().isoformat(), "command": " ".join(sys.argv),
                   "peaks": {}, "curves": {}, "costs": {}, "errors": {"init": f"{type(e).__name__}: {e}"},
                   "skipped": []}
            with open(args.out, "w") as f:
                json.dump(doc, f, indent=1)
        else:
            cal.out["errors"]["init"] = f"{type(e).__name__}: {e}"[:600]
        print(f"ERROR: {e}", flush=True)
    if cal is not None:
        cal.write()
        o = cal.out
        npts = sum(len(c["points"]) for c in o["curves"].values())
        print(f"wrote {args.out}: {len(o['curves'])} curves ({npts} points), {len(o['costs'])} costs, "
              f"{len(o['peaks'])} peaks, {len(o['errors'])} errors, {len(o['skipped'])} skipped, "
              f"{cal.elapsed():.1f}s", flush=True)
        print("keys: " + ", ".join(o.keys()))
        print("curves: " + ", ".join(f"{k}({len(v['points'])})" for k, v in o["curves"].items()))
        print("costs: " + ", ".join(o["costs"]))
        print("peaks: " + ", ".join(f"{k}={v}" for k, v in o["peaks"].items()))
        for k, v in o["errors"].items():
            print(f"error {k}: {v[:160]}")
        if validate is not None:
            probs, warns = validate(json.loads(json.dumps(clean(o))))
            for p in probs:
                print(f"check: {p}")
            print(f"check: {len(probs)} problem(s), {len(warns)} warning(s)")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)       # skip interpreter/CUDA teardown (DataLoader workers are already gone)


if __name__ == "__main__":
    main()
