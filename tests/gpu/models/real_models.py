"""Real models, written the way their users write them, and the fixes an expert
would apply to each, one at a time. Used to check the advisor: every fix is
measured here without gpuscope, and `advisor_models.sh` compares the measured
savings with the findings of `gpuscope analyze` on a recording of the plain
variant.

Models (random weights, synthetic data, no downloads):
  resnet50    timm ResNet-50, fp32 NCHW, batch 64, AdamW, data on the GPU
  gpt2        transformers GPT-2 small from a GPT2Config, fp32, batch 8 x 512
  tiny_mlp    a small MLP, batch 64: launch-bound
  item_loop   8-layer 4096 bf16 MLP that logs every parameter's grad norm with .item()
  cpu_dataset torchvision ResNet-18 fed by a Dataset doing torch CPU ops per sample, num_workers=0
  transformer a bf16 autocast transformer encoder with fused AdamW, eager: torch.compile saves 25 %
  healthy     a bf16 MLP of large GEMMs (4 x 8192, batch 8192) with fused AdamW: nothing to fix
  sync_loop   8-layer 4096 bf16 MLP, batch 2048, fused AdamW, that logs the loss and every
              parameter's grad norm with .item() (17 syncs a step): the syncs are what to fix
  lightning_cpu a Lightning Trainer fitting a torchvision ResNet-18 fed by the CPU-heavy Dataset
              in the main process (Lightning drives the loop; steps timed by a callback)
  pageable_copy a 64 MB batch copied from pageable host memory every step into a 2-layer
              4096 MLP (fp32): the copy is what to fix

Each run prints one line per variant:
  REAL_MODEL {"model": ..., "variant": ..., "step_ms": ..., "blocks_ms": [...]}
step_ms is the median of --blocks block means (each block: --steps steps timed
with one synchronize at its end, as a job runs). --threads adds "threads": what
the process did in each block (tests/gpu/models/process_probes.py says what).
"""

import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

import process_probes

VARIANTS = {
    "resnet50": ["plain", "channels_last", "bf16", "fused_adamw", "cuda_graphs", "compile", "tf32_off"],
    "gpt2": ["plain", "tf32", "bf16", "fused_adamw", "compile"],
    "tiny_mlp": ["plain", "fused_adamw", "cuda_graphs", "compile"],
    "item_loop": ["plain", "no_sync", "fused_adamw", "cuda_graphs", "compile"],
    "cpu_dataset": ["plain", "workers", "channels_last", "bf16", "cuda_graphs"],
    "transformer": ["plain", "channels_last", "cuda_graphs", "compile"],
    "healthy": ["plain", "cuda_graphs", "compile"],
    "sync_loop": ["plain", "no_sync", "compile"],
    "lightning_cpu": ["plain", "workers"],
    "pageable_copy": ["plain", "pinned"],
}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- models


def make_optimizer(params, variant, capturable=False):
    if variant == "fused_adamw":
        return torch.optim.AdamW(params, lr=1e-4, fused=True)
    if capturable:
        return torch.optim.AdamW(params, lr=1e-4, capturable=True)
    return torch.optim.AdamW(params, lr=1e-4)


def resnet50(variant):
    import timm

    model = timm.create_model("resnet50", num_classes=1000).cuda()
    x = torch.randn(64, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (64,), device="cuda")
    if variant == "channels_last":
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    if variant == "cuda_graphs":
        return graphed_step(model, x, y, F.cross_entropy)
    opt = make_optimizer(model.parameters(), variant)
    amp = variant == "bf16"
    if variant == "compile":
        model = torch.compile(model)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def gpt2(variant):
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(n_positions=512)
    model = GPT2LMHeadModel(config).cuda()
    model.train()
    ids = torch.randint(0, config.vocab_size, (8, 512), device="cuda")
    opt = make_optimizer(model.parameters(), variant)
    amp = variant == "bf16"
    if variant == "compile":
        model = torch.compile(model)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = model(input_ids=ids, labels=ids).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def tiny_mlp(variant):
    layers = []
    for _ in range(8):
        layers += [nn.Linear(256, 256), nn.LayerNorm(256), nn.GELU()]
    model = nn.Sequential(*layers, nn.Linear(256, 10)).cuda()
    x = torch.randn(64, 256, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    if variant == "compile":
        model = torch.compile(model)
    if variant == "cuda_graphs":
        return graphed_step(model, x, y, F.cross_entropy)
    opt = make_optimizer(model.parameters(), variant)

    def step():
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def graphed_step(model, x, y, loss_fn, amp=False, fused=False):
    """The whole step (forward, backward, optimizer) captured once and replayed,
    as in torch's CUDA graphs documentation. fused: the fused AdamW (capturable),
    for models whose plain variant already uses it."""
    if fused:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True, capturable=True)
    else:
        opt = make_optimizer(model.parameters(), "plain", capturable=True)
    static_x, static_y = x.clone(), y.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
                loss = loss_fn(model(static_x), static_y)
            loss.backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = loss_fn(model(static_x), static_y)
        loss.backward()
        opt.step()

    def step(xb=None, yb=None):
        static_x.copy_(x if xb is None else xb)
        static_y.copy_(y if yb is None else yb)
        graph.replay()

    return step


def item_loop(variant):
    model = nn.Sequential(*[nn.Sequential(nn.Linear(4096, 4096), nn.ReLU()) for _ in range(8)]).cuda()
    model = model.to(torch.bfloat16)
    x = torch.randn(256, 4096, device="cuda", dtype=torch.bfloat16)
    history = []
    if variant == "cuda_graphs":
        # The step replayed as a graph; the per-parameter .item() calls stay, after it.
        replay = graphed_step(model, x, x, lambda out, _: out.float().pow(2).mean(), fused=True)

        def graphed():
            replay()
            history.append({n: p.grad.norm().item() for n, p in model.named_parameters()})
            if len(history) > 100:
                history.clear()

        return graphed
    opt = make_optimizer(model.parameters(), variant)
    if variant == "compile":
        model = torch.compile(model)

    def step():
        loss = model(x).float().pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if variant == "no_sync":
            # One tensor of norms, read back once at the end of the run.
            norms = torch.stack([p.grad.norm() for p in model.parameters()])
            history.append(norms)
        else:
            norms = {n: p.grad.norm().item() for n, p in model.named_parameters()}
            history.append(norms)
        opt.step()
        if len(history) > 100:
            history.clear()

    return step


def sync_loop(variant):
    model = nn.Sequential(*[nn.Sequential(nn.Linear(4096, 4096), nn.ReLU()) for _ in range(8)]).cuda()
    model = model.to(torch.bfloat16)
    x = torch.randn(2048, 4096, device="cuda", dtype=torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    if variant == "compile":
        model = torch.compile(model)
    history = []

    def step():
        loss = model(x).float().pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if variant == "no_sync":
            # The norms and the loss kept on the GPU; read back once every 100 steps.
            history.append(torch.stack([loss.detach()] + [p.grad.norm().float() for p in model.parameters()]))
        else:
            history.append([loss.item()] + [p.grad.norm().item() for p in model.parameters()])
        opt.step()
        if len(history) >= 100:
            if variant == "no_sync":
                torch.stack(history).cpu()
            history.clear()

    return step


class CpuHeavyDataset(torch.utils.data.Dataset):
    """Decodes and augments one image per item with torch CPU ops, as a
    torchvision transform pipeline would."""

    def __init__(self, n=100000):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        img = torch.randint(0, 256, (3, 160, 160), generator=g, dtype=torch.uint8)
        img = img.float().div_(255)
        img = F.interpolate(img[None], size=(128, 128), mode="bilinear", align_corners=False)[0]
        if i % 2:
            img = img.flip(-1)
        mean = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
        std = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)
        img = (img - mean) / std
        return img, i % 100


def cpu_dataset(variant):
    import torchvision

    model = torchvision.models.resnet18(num_classes=100).cuda()
    workers = variant == "workers"
    loader = torch.utils.data.DataLoader(
        CpuHeavyDataset(), batch_size=64, shuffle=True, num_workers=8 if workers else 0,
        pin_memory=workers, persistent_workers=workers, drop_last=True)
    if variant == "channels_last":
        model = model.to(memory_format=torch.channels_last)
    it = iter(loader)
    if variant == "cuda_graphs":
        x0, y0 = next(it)
        replay = graphed_step(model, x0.cuda(), y0.cuda(), F.cross_entropy)

        def graphed():
            x, y = next(it)
            replay(x.cuda(), y.cuda())

        return graphed
    opt = make_optimizer(model.parameters(), variant)
    amp = variant == "bf16"

    def step():
        x, y = next(it)
        x, y = x.cuda(non_blocking=workers), y.cuda(non_blocking=workers)
        if variant == "channels_last":
            x = x.contiguous(memory_format=torch.channels_last)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def pageable_copy(variant):
    host = torch.randn(4096, 4096)  # 64 MB, pageable as a user's numpy-backed batch is
    if variant == "pinned":
        host = host.pin_memory()
    model = nn.Sequential(nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 4096)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)

    def step():
        x = host.to("cuda", non_blocking=variant == "pinned")
        loss = model(x).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def lightning_measure(variant, steps, blocks, warmup, torch_profiler):
    """Block means of a Lightning Trainer.fit: a callback synchronizes and
    stamps the time after the warm-up and after every block of steps."""
    try:
        import lightning as L
    except ImportError:
        import pytorch_lightning as L
    import torchvision

    class Classifier(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torchvision.models.resnet18(num_classes=100)

        def training_step(self, batch, batch_idx):
            x, y = batch
            return F.cross_entropy(self.net(x), y)

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-4)

    stamps = []
    state = {}

    class BlockTimer(L.Callback):
        def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
            done = batch_idx + 1
            if done < warmup or (done - warmup) % steps:
                return
            torch.cuda.synchronize()
            if done == warmup and torch_profiler:
                acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
                state["prof"] = torch.profiler.profile(activities=acts, record_shapes=True, profile_memory=True)
                state["prof"].start()
            stamps.append(time.perf_counter())

    workers = variant == "workers"
    loader = torch.utils.data.DataLoader(
        CpuHeavyDataset(), batch_size=64, shuffle=True, num_workers=8 if workers else 0,
        pin_memory=workers, persistent_workers=workers, drop_last=True)
    trainer = L.Trainer(accelerator="gpu", devices=1, max_steps=warmup + steps * blocks, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                        callbacks=[BlockTimer()])
    trainer.fit(Classifier(), loader)
    if "prof" in state:
        state["prof"].stop()
    return [1000.0 * (b - a) / steps for a, b in zip(stamps, stamps[1:])]


def healthy(variant):
    model = nn.Sequential(*[nn.Sequential(nn.Linear(8192, 8192), nn.GELU()) for _ in range(4)]).cuda()
    model = model.to(torch.bfloat16)
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    if variant == "cuda_graphs":
        return graphed_step(model, x, x, lambda out, t: out.float().pow(2).mean(), fused=True)
    if variant == "compile":
        model = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)

    def step():
        loss = model(x).float().pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def transformer(variant):
    layer = nn.TransformerEncoderLayer(d_model=1024, nhead=16, dim_feedforward=4096, batch_first=True,
                                       norm_first=True, dropout=0.0)
    model = nn.TransformerEncoder(layer, num_layers=8, enable_nested_tensor=False).cuda()
    x = torch.randn(32, 512, 1024, device="cuda")
    if variant == "cuda_graphs":
        return graphed_step(model, x, x, lambda out, t: out.float().pow(2).mean(), amp=True)
    if variant == "compile":
        model = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x).float().pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


MODELS = dict(resnet50=resnet50, gpt2=gpt2, tiny_mlp=tiny_mlp, item_loop=item_loop, cpu_dataset=cpu_dataset,
              healthy=healthy, transformer=transformer, sync_loop=sync_loop, lightning_cpu=None, pageable_copy=pageable_copy)

# ---------------------------------------------------------------- timing


def set_precision(variant):
    # torch's defaults: fp32 matmuls in full fp32, cuDNN convolutions in TF32.
    torch.backends.cuda.matmul.allow_tf32 = variant == "tf32"
    torch.backends.cudnn.allow_tf32 = variant != "tf32_off"
    torch.backends.cudnn.benchmark = False


def measure(model_name, variant, steps, blocks, warmup, torch_profiler=False, threads=None):
    """Block means in ms. torch_profiler: the whole timed run inside
    torch.profiler (CPU and CUDA, record_shapes, profile_memory), as its users
    run it; the trace is collected after the last block and not saved."""
    set_precision(variant)
    if model_name == "lightning_cpu":
        return lightning_measure(variant, steps, blocks, warmup, torch_profiler)
    step = MODELS[model_name](variant)
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    prof = None
    if torch_profiler:
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        prof = torch.profiler.profile(activities=acts, record_shapes=True, profile_memory=True)
        prof.start()
        step()  # the profiler's start-up out of the timed blocks
        torch.cuda.synchronize()
    means = []
    probe_tensor = torch.zeros(1, device="cuda") if threads is not None else None
    for _ in range(blocks):
        before = process_probes.block_start() if threads is not None else None
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        means.append(1000.0 * (time.perf_counter() - t0) / steps)
        if threads is not None:
            threads.append(process_probes.block_stats(before, steps, probe_tensor))
    if prof is not None:
        prof.stop()
    return means


def profile(model_name, steps, path):
    """torch.profiler trace of the plain variant (record_shapes, a ProfilerStep per step)."""
    set_precision("plain")
    step = MODELS[model_name]("plain")
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    # A schedule that always records (so the trace has ProfilerStep#N ranges)
    # and keeps its events.
    always = lambda _: torch.profiler.ProfilerAction.RECORD  # noqa: E731
    with torch.profiler.profile(activities=acts, record_shapes=True, schedule=always, acc_events=True) as prof:
        for _ in range(steps):
            step()
            prof.step()
    torch.cuda.synchronize()
    prof.export_chrome_trace(path)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=sorted(MODELS), required=True)
    p.add_argument("--variant", default="all", help="a variant, several joined by commas, or all (plain first and last)")
    p.add_argument("--torch-profiler", action="store_true",
                   help="time the run under torch.profiler (record_shapes, profile_memory): tracing cost beside gpuscope's")
    p.add_argument("--steps", type=int, default=20, help="steps per timed block")
    p.add_argument("--blocks", type=int, default=3)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--profile", metavar="OUT.json", help="write a torch.profiler trace of the plain variant")
    p.add_argument("--threads", action="store_true", help="report each block's per-thread CPU time, switches, faults")
    args = p.parse_args()
    if args.threads:
        # bench/models/pc_sampler.py may sample this process though it is not
        # its parent (Yama's ptrace_scope 1): PR_SET_PTRACER, PR_SET_PTRACER_ANY.
        import ctypes
        ctypes.CDLL(None).prctl(0x59616D61, ctypes.c_ulong(-1 & 0xFFFFFFFFFFFFFFFF), 0, 0, 0)
    if args.profile:
        profile(args.model, args.steps, args.profile)
        return
    variants = VARIANTS[args.model] + ["plain"] if args.variant == "all" else args.variant.split(",")
    unknown = [v for v in variants if v not in VARIANTS[args.model]]
    if unknown:
        p.error("%s has no variant %s (it has: %s)" % (args.model, ", ".join(unknown), ", ".join(VARIANTS[args.model])))
    for v in variants:
        t0 = time.time()
        threads = [] if args.threads else None
        try:
            means = measure(args.model, v, args.steps, args.blocks, args.warmup, args.torch_profiler, threads)
        except Exception as e:  # a fix this torch cannot apply is reported, not fatal
            log("variant %s of %s failed: %r" % (v, args.model, e))
            print("REAL_MODEL " + json.dumps(dict(model=args.model, variant=v, error=repr(e)[:300])), flush=True)
            continue
        print("REAL_MODEL " + json.dumps(dict(model=args.model, variant=v, step_ms=statistics.median(means),
                                              torch_profiler=args.torch_profiler,
                                              blocks_ms=[round(m, 3) for m in means],
                                              seconds=round(time.time() - t0, 1),
                                              **({"threads": threads} if threads is not None else {}))), flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
