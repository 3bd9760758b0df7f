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
smoke test of the code, not a calibration.  See README.md.
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


def sig(v, digits=4):
    """Round to `digits` significant digits; None for non-finite."""
    if v is None or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(f"{v:.{digits}g}")


def clean(o):
    """JSON-safe copy: non-finite floats -> None."""
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {str(k): clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [clean(v) for v in o]
    return o


class Batches:
    """Already-collated batches in memory (a map-style dataset): a worker does nothing but hand one over."""

    def __init__(self, n):
        import torch
        self.n, self.x, self.y = n, torch.randn(64, 3, 32, 32), torch.zeros(64, dtype=torch.long)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.x, self.y


class Skip(Exception):
    """An entry that cannot run here (not an error)."""


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


class Calibrator:
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
    def sec_peaks(self):
        torch = self.torch
        n = 256 if self.quick else 8192

        def gemm_peak(key, dtype, prec):
            def go():
                torch.set_float32_matmul_precision(prec)
                try:
                    a = torch.randn(n, n, device=self.dev, dtype=dtype)
                    b = torch.randn(n, n, device=self.dev, dtype=dtype)
                    f = lambda: torch.mm(a, b)  # noqa: E731
                    it = self.iters_for(f, 0.02)
                    ts = [self.gpu_ms(f, it) for _ in range(self.reps)]
                    self.out["peaks"][key] = sig(2 * n ** 3 / (min(ts) * 1e-3) / 1e12)
                finally:
                    torch.set_float32_matmul_precision("highest")
            return go
        self.entry("peaks/fp32_simt_tflops", gemm_peak("fp32_simt_tflops", torch.float32, "highest"), 3)
        self.entry("peaks/tf32_tflops", gemm_peak("tf32_tflops", torch.float32, "high"), 2)
        self.entry("peaks/bf16_tflops", gemm_peak("bf16_tflops", torch.bfloat16, "highest"), 2)

        def dram():
            numel = (1 << 20) if self.quick else (1 << 28)       # 1 GB fp32 on the GPU
            src = torch.empty(numel, device=self.dev).fill_(1.0)
            dst = torch.empty_like(src)
            f = lambda: dst.copy_(src)  # noqa: E731
            it = self.iters_for(f, 0.01)
            ts = [self.gpu_ms(f, it) for _ in range(self.reps)]
            self.out["peaks"]["dram_gbps"] = sig(2 * numel * 4 / (min(ts) * 1e-3) / 1e9)
        self.entry("peaks/dram_gbps", dram, 2)

    # ---- CPU-side costs ------------------------------------------------------------------------
    def cpu_loop_us(self, fn, n):
        """CPU us per call of fn over n calls (median of reps), after a warm-up; [per rep]."""
        for _ in range(min(n, 200)):
            fn()
        self.sync()
        out = []
        for _ in range(self.reps):
            t = time.perf_counter()
            for _ in range(n):
                fn()
            out.append((time.perf_counter() - t) * 1e6 / n)
            self.sync()
        return out

    def sec_cpu_costs(self):
        torch = self.torch
        n = 1000 if self.quick else 10000

        def eager_op():
            a = torch.ones(8, device=self.dev)
            b = torch.ones(8, device=self.dev)
            self.cost("eager_op_cpu_us", self.cpu_loop_us(lambda: torch.add(a, b), n))
        self.entry("costs/eager_op_cpu_us", eager_op, 2)

        def launch_api():
            a = torch.ones(8, device=self.dev)
            self.cost("launch_api_us", self.cpu_loop_us(lambda: a.add_(1.0), n))
        self.entry("costs/launch_api_us", launch_api, 2)

        def linear_and_autocast():
            lin = torch.nn.Linear(64, 64).to(self.dev)
            x = torch.randn(8, 64, device=self.dev)
            m = n // 2
            plain = self.cpu_loop_us(lambda: lin(x), m)
            with self.autocast():
                ac = self.cpu_loop_us(lambda: lin(x), m)
            self.cost("eager_linear_cpu_us", plain)
            self.cost("autocast_op_cpu_us", [a - p for a, p in zip(ac, plain)],
                      linear_autocast_cpu_us=sig(statistics.median(ac)))
        self.entry("costs/eager_linear_cpu_us+autocast_op_cpu_us", linear_and_autocast, 3)

        def cast():
            sizes_mb = [0.25, 1.0] if self.quick else [4.0, 16.0, 64.0, 256.0]
            per_rep = []          # per size: [kernel us per rep]
            for mb in sizes_mb:
                x = torch.randn(int(mb * (1 << 20) / 4), device=self.dev)
                run = self.profile_form(lambda: x.to(torch.bfloat16), f"cast {mb}MB")
                per_rep.append(run.stats("all", not self.cuda)["per_iter"])
                del x
            k = min(len(p) for p in per_rep)
            slopes = []
            for r in range(k):      # least squares slope over sizes, per repetition
                ys = [p[r] for p in per_rep]
                mx, my = statistics.mean(sizes_mb), statistics.mean(ys)
                slopes.append(sum((a - mx) * (b - my) for a, b in zip(sizes_mb, ys))
                              / sum((a - mx) ** 2 for a in sizes_mb))
            self.cost("cast_kernel_us_per_mb", slopes, sizes_mb=sizes_mb)
            tiny = torch.randn(1024, device=self.dev)
            run = self.profile_form(lambda: tiny.to(torch.bfloat16), "cast tiny")
            st = run.stats("all", not self.cuda)
            self.cost("cast_kernel_floor_us", st["per_iter"])
        self.entry("costs/cast_kernel", cast, 3)

    # ---- CUDA graphs and the eager gap floor ---------------------------------------------------
    def sec_graph_costs(self):
        torch = self.torch
        if not self.cuda:
            for nm in ("costs/graph_launch_cpu_us", "costs/graph_node_gpu_us", "costs/eager_kernel_gap_us"):
                self.skip(nm, "cuda only")
            return
        a = torch.zeros(16, device=self.dev)

        def capture(nodes):
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    a.add_(1.0)
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(nodes):
                    a.add_(1.0)
            g.replay()
            torch.cuda.synchronize()
            return g

        def graph_launch():
            g1, g200 = capture(1), capture(200)
            res = {}
            for nm, g in (("g1", g1), ("g200", g200)):
                meds = []
                for _ in range(self.reps):
                    ts = []
                    for _ in range(50):
                        t = time.perf_counter()
                        g.replay()
                        ts.append((time.perf_counter() - t) * 1e6)
                    torch.cuda.synchronize()
                    meds.append(statistics.median(ts))
                res[nm] = meds
            self.cost("graph_launch_cpu_us", res["g1"])
            self.cost("graph_launch_cpu_us_per_node", [(b - a_) / 199 for a_, b in zip(res["g1"], res["g200"])],
                      graph200_launch_cpu_us=sig(statistics.median(res["g200"])))
        self.entry("costs/graph_launch_cpu_us", graph_launch, 2, cuda_only=True)

        def graph_node():
            g = capture(1000)
            ts = [self.gpu_ms(g.replay, 5) * 1e3 / 1000 for _ in range(self.reps)]
            self.cost("graph_node_gpu_us", ts)
        self.entry("costs/graph_node_gpu_us", graph_node, 2, cuda_only=True)

        def eager_gap():
            # cycles per ms of torch.cuda._sleep
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(1000)
            e0.record()
            torch.cuda._sleep(10_000_000)
            e1.record()
            e1.synchronize()
            cyc_per_ms = 10_000_000 / max(e0.elapsed_time(e1), 1e-3)
            for _ in range(50):
                a.add_(1.0)
            vals, used = [], None
            for n in (1000, 500, 250):
                vals = []
                ahead = True
                for _ in range(self.reps):
                    torch.cuda.synchronize()
                    torch.cuda._sleep(int(cyc_per_ms * 60))          # ~60 ms: the CPU gets far ahead
                    e0.record()
                    for _ in range(n):
                        a.add_(1.0)
                    e1.record()
                    ahead = ahead and not e0.query()       # still in the sleep: all n were queued in time
                    e1.synchronize()
                    vals.append(e0.elapsed_time(e1) * 1e3 / n)
                if ahead:
                    used = n
                    break
            self.cost("eager_kernel_gap_us", vals, kernels=used or n,
                      cpu_ahead=bool(used), sleep_cycles_per_ms=sig(cyc_per_ms))
        self.entry("costs/eager_kernel_gap_us", eager_gap, 2, cuda_only=True)

    # ---- host-to-device copies -----------------------------------------------------------------
    def sec_copies(self):
        torch = self.torch
        if not self.cuda:
            self.skip("costs/h2d_copies", "cuda only")
            return

        def copies():
            numel = 16 << 20                      # 64 MB of fp32
            dst = torch.empty(numel, device=self.dev)
            pinned = torch.ones(numel, pin_memory=True)
            pageable = torch.ones(numel)
            f = lambda: dst.copy_(pinned, non_blocking=True)  # noqa: E731
            f()
            torch.cuda.synchronize()
            pin = [64 * (1 << 20) / (self.gpu_ms(f, 5) * 1e-3) / 1e9 for _ in range(self.reps)]
            dst.copy_(pageable)
            torch.cuda.synchronize()
            page = []
            for _ in range(self.reps):
                t = time.perf_counter()
                for _ in range(3):
                    dst.copy_(pageable)
                torch.cuda.synchronize()
                page.append(3 * 64 * (1 << 20) / (time.perf_counter() - t) / 1e9)
            self.out["peaks"]["pinned_h2d_gbps"] = sig(max(pin))
            self.out["peaks"]["pageable_h2d_gbps"] = sig(max(page))
            self.cost("pinned_h2d_gbps", pin)
            self.cost("pageable_h2d_gbps", page)
        self.entry("costs/h2d_copies", copies, 2, cuda_only=True)

    # ---- GEMM ----------------------------------------------------------------------------------
    def sec_gemm(self):
        torch = self.torch
        shapes = ([(8, 16, 16), (32, 64, 64), (64, 128, 128)] if self.quick else
                  [(64, 256, 256), (256, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048),
                   (4096, 1024, 4096), (8192, 4096, 1024), (4096, 4096, 4096), (8192, 8192, 8192)])
        ids = {("fp32", "bf16"): "gemm_fp32_to_bf16", ("tf32", "bf16"): "gemm_tf32_to_bf16",
               ("fp32", "tf32"): "gemm_fp32_to_tf32"}
        for (bsz, fin, fout) in shapes:
            label = f"{bsz}x{fin}x{fout}"

            def go(bsz=bsz, fin=fin, fout=fout, label=label):
                lin = torch.nn.Linear(fin, fout, device=self.dev)
                x = torch.randn(bsz, fin, device=self.dev, requires_grad=True)
                leaves = [x] + list(lin.parameters())
                runs = {}
                for form, prec, ac in (("fp32", "highest", False), ("tf32", "high", False), ("bf16", "highest", True)):
                    torch.set_float32_matmul_precision(prec)
                    try:
                        runs[form] = self.profile_form(self.fwd_bwd(lambda: lin(x), leaves, ac), f"{label} {form}")
                    finally:
                        torch.set_float32_matmul_precision("highest")
                for (b, n), cid in ids.items():
                    self.add_point(cid, f"nn.Linear fwd+bwd (B x in x out), gemm kernels: {CURVES.get(cid, cid)}",
                                   label, runs[b], runs[n], "gemm")
            est = 4 if bsz >= 8192 and fin >= 8192 else 1
            self.entry(f"gemm/{label}", go, est)
        self.free()

    # ---- convolution ---------------------------------------------------------------------------
    def sec_conv(self):
        torch = self.torch
        cl = torch.channels_last
        shapes = ([(2, 32, 32, 8, 3), (2, 32, 64, 8, 1)] if self.quick else
                  [(32, 512, 512, 7, 1), (32, 512, 512, 7, 3), (32, 256, 256, 14, 3), (64, 256, 1024, 14, 1),
                   (32, 128, 128, 28, 3), (32, 64, 64, 56, 1), (32, 64, 64, 56, 3), (64, 64, 64, 56, 3)])
        shares = {"nchw_fp32": [], "nchw_bf16": [], "nhwc_fp32": [], "nhwc_bf16": []}
        for (n, cin, cout, hw, k) in shapes:
            label = f"N{n} C{cin}->{cout} {hw}x{hw} k{k}"

            def go(n=n, cin=cin, cout=cout, hw=hw, k=k, label=label):
                conv = torch.nn.Conv2d(cin, cout, k, padding=k // 2, bias=False, device=self.dev)
                conv_cl = copy.deepcopy(conv).to(memory_format=cl)
                x = torch.randn(n, cin, hw, hw, device=self.dev, requires_grad=True)
                x_cl = x.detach().contiguous(memory_format=cl).requires_grad_()
                runs = {}
                for form, mod, inp, ac in (("nchw_fp32", conv, x, False), ("nchw_bf16", conv, x, True),
                                           ("nhwc_fp32", conv_cl, x_cl, False), ("nhwc_bf16", conv_cl, x_cl, True)):
                    step = self.fwd_bwd(lambda mod=mod, inp=inp: mod(inp), [inp] + list(mod.parameters()), ac)
                    runs[form] = self.profile_form(step, f"{label} {form}")
                for form, run in runs.items():
                    cv = statistics.median(run.stats("conv", not self.cuda)["per_iter"])
                    tr = statistics.median(run.stats("transpose", not self.cuda)["per_iter"])
                    if cv > 0:
                        shares[form].append(tr / cv)
                what = "nn.Conv2d fwd+bwd (ResNet-like shapes), conv-class kernels only (transposes excluded): "
                self.add_point("conv_fp32_to_bf16", what + "NCHW fp32 (cuDNN TF32 on) -> NCHW bf16 autocast",
                               label, runs["nchw_fp32"], runs["nchw_bf16"], "conv", fallback="all")
                self.add_point("conv_nchw_to_nhwc_fp32", what + "NCHW fp32 -> channels_last fp32",
                               label, runs["nchw_fp32"], runs["nhwc_fp32"], "conv", fallback="all")
                self.add_point("conv_nchw_to_nhwc_bf16", what + "NCHW bf16 autocast -> channels_last bf16 autocast",
                               label, runs["nchw_bf16"], runs["nhwc_bf16"], "conv", fallback="all")
            self.entry(f"conv/{label}", go, 1.5)

        def share():
            for form, vals in shares.items():
                if vals:
                    self.cost(f"conv_transpose_share_{form}", vals, unit="fraction",
                              what=f"transpose kernels / conv kernels time, {form}, median over the conv shapes "
                                   f"(lo/hi: min/max over shapes)")
        self.entry("costs/conv_transpose_share", share, 0)

    # ---- norms ---------------------------------------------------------------------------------
    def sec_norms(self):
        torch = self.torch
        cl = torch.channels_last
        sizes = ([(2, 32, 8), (2, 64, 4)] if self.quick else
                 [(32, 512, 7), (64, 512, 7), (32, 256, 14), (32, 128, 28), (32, 64, 56), (64, 128, 56), (64, 256, 56)])
        for kind in ("batchnorm", "groupnorm"):
            for (n, c, hw) in sizes:
                label = f"N{n} C{c} {hw}x{hw}"

                def go(kind=kind, n=n, c=c, hw=hw, label=label):
                    mod = (torch.nn.BatchNorm2d(c) if kind == "batchnorm" else torch.nn.GroupNorm(32, c)).to(self.dev)
                    mod_cl = copy.deepcopy(mod).to(memory_format=cl)
                    x = torch.randn(n, c, hw, hw, device=self.dev, requires_grad=True)
                    x_cl = x.detach().contiguous(memory_format=cl).requires_grad_()
                    # bf16 activations as a preceding conv under autocast would produce them
                    x_bf = x.detach().to(torch.bfloat16).requires_grad_()
                    p, pc = list(mod.parameters()), list(mod_cl.parameters())
                    base = self.profile_form(self.fwd_bwd(lambda: mod(x), [x] + p), f"{label} nchw fp32")
                    nhwc = self.profile_form(self.fwd_bwd(lambda: mod_cl(x_cl), [x_cl] + pc), f"{label} nhwc fp32")
                    bf = self.profile_form(self.fwd_bwd(lambda: mod(x_bf), [x_bf] + p, ac=True), f"{label} bf16")
                    nm = "BatchNorm2d" if kind == "batchnorm" else "GroupNorm(32, C)"
                    self.add_point(f"{kind}_nchw_to_nhwc", f"{nm} fwd+bwd fp32, {kind} kernels: NCHW -> channels_last",
                                   label, base, nhwc, "all")
                    self.add_point(f"{kind}_fp32_to_bf16",
                                   f"{nm} fwd+bwd NCHW, {kind} kernels: fp32 input outside autocast -> bf16 input "
                                   f"inside bf16 autocast (what autocast does, casts included in 'all')",
                                   label, base, bf, "all")
                self.entry(f"{kind}/{label}", go, 1.5)
        lsizes = ([(64, 32), (256, 64)] if self.quick else
                  [(512, 512), (2048, 768), (8192, 1024), (16384, 2048), (32768, 4096), (65536, 4096)])
        for (rows, d) in lsizes:
            label = f"{rows}x{d}"

            def go(rows=rows, d=d, label=label):
                ln = torch.nn.LayerNorm(d, device=self.dev)
                x = torch.randn(rows, d, device=self.dev, requires_grad=True)
                x_bf = x.detach().to(torch.bfloat16).requires_grad_()
                p = list(ln.parameters())
                base = self.profile_form(self.fwd_bwd(lambda: ln(x), [x] + p), f"{label} fp32")
                bf = self.profile_form(self.fwd_bwd(lambda: ln(x_bf), [x_bf] + p, ac=True), f"{label} bf16")
                self.add_point("layernorm_fp32_to_bf16",
                               "LayerNorm(D) fwd+bwd on (rows, D), layernorm kernels: fp32 input outside autocast -> "
                               "bf16 input inside bf16 autocast (autocast runs layer_norm in fp32)",
                               label, base, bf, "all")
            self.entry(f"layernorm/{label}", go, 1.5)

    # ---- elementwise ---------------------------------------------------------------------------
    def sec_elementwise(self):
        torch = self.torch
        F = torch.nn.functional
        sizes = [1 << 12, 1 << 16] if self.quick else [1 << 14, 1 << 17, 1 << 20, 1 << 23, 1 << 26, 1 << 28]
        for numel in sizes:
            label = f"{numel} elements"

            def go(numel=numel, label=label):
                runs = {}
                for dt in (torch.float32, torch.bfloat16):
                    x = torch.randn(numel, device=self.dev, dtype=dt, requires_grad=True)
                    y = torch.randn(numel, device=self.dev, dtype=dt, requires_grad=True)
                    g = torch.randn(numel, device=self.dev, dtype=dt)

                    def step(x=x, y=y, g=g):
                        z = torch.relu(F.gelu(torch.add(torch.mul(x, y), x)))
                        torch.autograd.grad(z, (x, y), g)
                    runs[dt] = self.profile_form(step, f"{label} {dt}")
                    del x, y, g
                self.add_point("elementwise_fp32_to_bf16",
                               "add/mul/gelu/relu fwd+bwd on 1-D tensors (16K..256M elements), elementwise kernels: "
                               "fp32 tensors -> bf16 tensors", label, runs[torch.float32], runs[torch.bfloat16],
                               "elementwise")
            self.entry(f"elementwise/{label}", go, 2 if numel >= (1 << 28) else 1)
        self.free()

    # ---- LSTM ----------------------------------------------------------------------------------
    def sec_rnn(self):
        torch = self.torch
        batch = 4 if self.quick else 32
        sizes = ([(16, 8), (32, 8)] if self.quick else
                 [(256, 64), (256, 128), (512, 64), (512, 128), (1024, 64), (1024, 128)])
        for (hid, seq) in sizes:
            label = f"hidden {hid} seq {seq} batch {batch}"

            def go(hid=hid, seq=seq, label=label):
                lstm = torch.nn.LSTM(hid, hid, num_layers=2, device=self.dev)
                x = torch.randn(seq, batch, hid, device=self.dev, requires_grad=True)
                leaves = [x] + list(lstm.parameters())
                base = self.profile_form(self.fwd_bwd(lambda: lstm(x)[0], leaves), f"{label} fp32")
                bf = self.profile_form(self.fwd_bwd(lambda: lstm(x)[0], leaves, ac=True), f"{label} bf16")
                self.add_point("rnn_fp32_to_bf16", "nn.LSTM(H, H, 2 layers) fwd+bwd, (seq, batch 32, H), ALL kernels: "
                               "fp32 (cuDNN TF32 default) -> bf16 autocast", label, base, bf, "all")
            self.entry(f"rnn/{label}", go, 1.5)

    # ---- optimizer -----------------------------------------------------------------------------
    def sec_optimizer(self):
        torch = self.torch
        layers = 4 if self.quick else 20
        sizes_m = [0.01, 0.1] if self.quick else [0.1, 1, 10, 50, 100]
        kpt = {"foreach": [], "fused": []}
        launches = {"foreach": [], "fused": []}      # kernels per step, per size
        done_m = []
        for pm in sizes_m:
            label = f"{pm}M params"

            def go(pm=pm, label=label):
                total = int(pm * 1e6)
                bias = min(1024, max(1, total // (layers * 8)))
                w = max(1, total // layers - bias)

                def params():
                    ps = []
                    for _ in range(layers):
                        for sz in (w, bias):
                            p = torch.zeros(sz, device=self.dev, requires_grad=True)
                            p.grad = torch.randn(sz, device=self.dev) * 1e-3
                            ps.append(p)
                    return ps
                runs, got = {}, {}
                for form, kw in (("foreach", {}), ("fused", {"fused": True})):
                    ps = params()
                    opt = torch.optim.AdamW(ps, lr=1e-3, **kw)
                    runs[form] = self.profile_form(opt.step, f"{label} {form}")
                    st = runs[form].stats("all", not self.cuda)
                    got[form] = (st["kernels_per_iter"] / len(ps), st["kernels_per_iter"])
                    del opt, ps
                for form, (per_tensor, per_step) in got.items():   # both forms ran: lists stay aligned
                    kpt[form].append(per_tensor)
                    launches[form].append(per_step)
                done_m.append(pm)
                self.add_point("optimizer_fused", "AdamW step over 2x%d tensors (weights + 1K biases), all kernels: "
                               "default (foreach) -> fused=True; x = parameters in millions" % layers,
                               label, runs["foreach"], runs["fused"], "all", x=pm)
            self.entry(f"optimizer/{label}", go, 2)

        def per_tensor():
            for form in ("foreach", "fused"):
                if kpt[form]:
                    self.cost(f"{form}_adamw_kernels_per_param_tensor", kpt[form],
                              tensors=2 * layers, sizes_m=done_m)
            pairs = [f / e for e, f in zip(launches["foreach"], launches["fused"]) if e > 0]
            if pairs:
                self.cost("fused_to_foreach_launches", pairs, kernels_per_step_foreach=[sig(v) for v in launches["foreach"]],
                          kernels_per_step_fused=[sig(v) for v in launches["fused"]], sizes_m=done_m)
        self.entry("costs/adamw_kernels_per_param_tensor", per_tensor, 0)

    # ---- DataLoader ----------------------------------------------------------------------------
    def sec_dataloader(self):
        def go():
            import torch.utils.data as tud

            n_next = 60 if self.quick else 100
            dl = tud.DataLoader(Batches(10 ** 6), batch_size=None, num_workers=4, prefetch_factor=4)
            it = iter(dl)
            try:
                next(it)
                meds = []
                for _ in range(self.reps):
                    ts = []
                    for _ in range(n_next):
                        time.sleep(0.001)          # let the workers refill the queue
                        t = time.perf_counter()
                        next(it)
                        ts.append((time.perf_counter() - t) * 1e6)
                    meds.append(statistics.median(ts))
                self.cost("dataloader_next_us", meds, batch="64x3x32x32 fp32 + 64 int64")
            finally:
                del it
        self.entry("costs/dataloader_next_us", go, 3)

    # ---- torch.compile: chain fusion and compiled call costs -----------------------------------
    def sec_compile(self):
        torch = self.torch
        F = torch.nn.functional
        state = {"first": True, "ok": True}

        def compiler():
            if not hasattr(torch, "compile"):
                raise Skip(f"torch.compile not in torch {torch.__version__}")
            if state["first"]:
                state["first"] = False
                with contextlib.suppress(Exception):
                    importlib.import_module("torch._inductor.config").compile_threads = 1        # in-process compile: no worker pool to start
                dcfg = importlib.import_module("torch._dynamo.config")
                for knob in ("cache_size_limit", "recompile_limit"):
                    with contextlib.suppress(Exception):
                        if hasattr(dcfg, knob):
                            setattr(dcfg, knob, 64)
            return lambda f: torch.compile(f, dynamic=False)

        ops = [lambda t: t * 1.25, lambda t: t + 0.5, F.gelu, lambda t: t * 0.8,
               lambda t: t - 0.25, torch.relu, torch.sigmoid, lambda t: t * 2.0]
        numel = (1 << 16) if self.quick else (1 << 24)
        ks = [2, 4] if self.quick else [2, 3, 4, 6, 8]
        for k in ks:
            def go(k=k):
                comp = compiler()
                chain_ops = ops[:k]

                def chain(t):
                    for op in chain_ops:
                        t = op(t)
                    return t
                x = torch.randn(numel, device=self.dev)
                eager = self.profile_form(lambda: chain(x), f"chain {k} eager")
                cf = comp(chain)
                t = time.monotonic()
                cf(x)
                self.sync()
                compile_s = time.monotonic() - t
                fused = self.profile_form(lambda: cf(x), f"chain {k} compiled")
                self.add_point("chain_fusion", "chain of k elementwise ops (*, +, gelu, *, -, relu, sigmoid, *) on a "
                               "16M-element fp32 tensor, forward: eager (k kernels) -> torch.compile (all kernels); "
                               "x = k", f"k={k}", eager, fused, "all", x=k)
                self.out["curves"]["chain_fusion"]["detail"][-1]["compile_s"] = round(compile_s, 2)
            self.entry(f"chain_fusion/k={k}", go, 8 if state["first"] else 3)

        def compiled_costs():
            comp = compiler()
            nt = 20
            xs = [torch.randn(4096, device=self.dev) for _ in range(nt)]

            def one(x):
                return x * 2.0 + 1.0

            def many(xs):
                return [x * 2.0 + 1.0 for x in xs]   # independent: one kernel each (no shared buffer)
            c1, cn = comp(one), comp(many)
            calls = 200 if self.quick else 2000
            t1 = self.cpu_loop_us(lambda: c1(xs[0]), calls)
            tn = self.cpu_loop_us(lambda: cn(xs), calls // 5)
            k1 = self.profile_form(lambda: c1(xs[0]), "compiled 1", iters=5, reps=1).stats("all")["kernels_per_iter"]
            kn = self.profile_form(lambda: cn(xs), "compiled n", iters=5, reps=1).stats("all")["kernels_per_iter"]
            if kn <= k1:
                raise RuntimeError(f"compiled function of {nt} ops launched {kn} kernels per call, 1 op {k1}")
            slopes = [(b - a) / (kn - k1) for a, b in zip(t1, tn)]
            self.cost("compiled_kernel_cpu_us", slopes, kernels_per_call=[sig(k1), sig(kn)],
                      call_cpu_us=[sig(statistics.median(t1)), sig(statistics.median(tn))],
                      what="CPU time per kernel of a torch.compile'd function: (call of %d independent ops - call "
                           "of 1 op) / kernel-count difference" % nt)
            self.cost("compiled_call_cpu_us", [a - s * k1 for a, s in zip(t1, slopes)],
                      what="fixed CPU cost of calling a torch.compile'd function: 1-op call minus its kernels' cost")
        self.entry("costs/compiled_kernel_cpu_us", compiled_costs, 5)


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
