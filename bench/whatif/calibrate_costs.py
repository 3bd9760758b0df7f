"""Cost sections of bench/whatif/calibrate.py: peak rates, CPU costs of an
eager op and of autocast, CUDA-graph replay costs, host-to-device copies. A
mixin of Calibrator (calibrate.py), which supplies the timing helpers they call.
"""

import statistics
import time

from calibrate_kernels import sig


class CostSections:
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
