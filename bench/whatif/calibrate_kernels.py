"""Kernel-class sections of bench/whatif/calibrate.py: GEMMs, convolutions,
norms, pointwise, the LSTM, the optimizer, the DataLoader and torch.compile's
fusion. A mixin of Calibrator (calibrate.py), which supplies the timing
helpers (profile_form, add_point, cost, entry) they call.
"""

import copy  # noqa: F401  (used by the sections)
import os
import sys
import math  # noqa: F401
import statistics  # noqa: F401
import time  # noqa: F401

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    from check_calibration import CURVES
except Exception:  # the checker is beside this file; keep going without it
    CURVES = {}


def sig(v, digits=4):
    """Round to `digits` significant digits; None for non-finite."""
    if v is None or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(f"{v:.{digits}g}")


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


class KernelSections:
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
