"""Real models, written the way their users write them, and the fixes gpuscope's
what-if advisor proposes for them. The ground truth for the advisor: every fix,
alone and in a few natural combinations, is timed without any profiler by
time_fixes.py; run_plain.py runs one variant as a user script (what
record_models.py records with gpuscope).

A model is a function build(fixes, device, tiny) -> step_fn, registered with
@model(fixes=..., combos=...): step_fn() runs one training step (forward, loss,
zero_grad, backward, optimizer step). build.FIXES are the fixes that apply to
it, build.COMBOS the multi-fix combinations worth timing. tiny shrinks the
model and batch for a CPU smoke test (--device cpu --tiny); on the CPU the
"cuda-graphs" step runs its captured closure eagerly, fused AdamW falls back to
the default one, and torch.compile needs a torch that has it.

Random weights and synthetic data only: the GPU machine has no network.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

# The advisor's fix ids.
ALL_FIXES = ("amp", "channels-last", "fused-optimizer", "compile", "cuda-graphs", "host-sync",
             "dataloader-stall", "pageable-memcpy")

MODELS = {}


def model(fixes, combos, steps=None):
    """Registers a build function. combos: "a+b" strings. steps: the least
    steps per timed block this model needs (a DataLoader's prefetch queue must
    not hide its workers' rate)."""
    def register(build):
        unknown = [f for f in list(fixes) + [f for c in combos for f in c.split("+")] if f not in ALL_FIXES]
        assert not unknown, (build.__name__, unknown)
        build.FIXES = tuple(fixes)
        build.COMBOS = [frozenset(c.split("+")) for c in combos]
        build.STEPS = steps
        MODELS[build.__name__] = build
        return build
    return register


def key(fixes):
    """A variant's name: its fix ids sorted and joined by '+', or plain."""
    return "+".join(sorted(fixes)) or "plain"


def build(name, fixes, device="cuda", tiny=False):
    fixes = frozenset(fixes)
    fn = MODELS[name]
    bad = sorted(fixes - set(fn.FIXES))
    if bad:
        raise ValueError("%s does not take %s (it takes: %s)" % (name, ", ".join(bad), ", ".join(fn.FIXES)))
    return fn(fixes, device, tiny)


def set_defaults():
    # torch's defaults, as its users run it: fp32 matmuls in full fp32, cuDNN
    # convolutions in TF32, no cuDNN autotuning.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = False


# ---------------------------------------------------------------- shared pieces


def autocast(device, enabled):
    return torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=enabled)


def adamw(params, device, fused, capturable=False):
    """AdamW as users build it: the default (foreach) one, or fused=True. On the
    CPU (smoke test on an old torch) neither fused nor capturable is passed."""
    kw = {}
    if device == "cuda":
        if fused:
            kw["fused"] = True
        if capturable:
            kw["capturable"] = True
    return torch.optim.AdamW(params, lr=1e-4, **kw)


def to_channels_last(t):
    return t.contiguous(memory_format=torch.channels_last) if t.dim() == 4 and t.is_floating_point() else t


class LossLog:
    """What a script does with its loss each step. log=False: nothing. Else
    `losses.append(loss.item())` every step (a host sync), or, with the
    host-sync fix, the loss kept on the GPU and read back once every 50 steps."""

    def __init__(self, log, host_sync):
        self.log, self.host_sync, self.history = log, host_sync, []

    def __call__(self, loss, clone=False):
        if not self.log:
            return
        if self.host_sync:
            # A graph's static loss is overwritten by the next replay: keep a copy.
            self.history.append(loss.detach().clone() if clone else loss.detach())
            if len(self.history) >= 50:
                torch.stack(self.history).tolist()
                self.history.clear()
        else:
            self.history.append(loss.item())
            if len(self.history) > 1000:
                self.history.clear()


def graphed(model, batch, loss_of, device, amp, fused):
    """The whole step (forward, backward, optimizer with capturable=True)
    captured once and replayed, as graphed_step in
    tests/gpu/models/real_models.py. Returns run() -> loss: run copies the batch
    into the static inputs (as a new batch would be) and replays the graph; the
    loss it returns is the graph's static output. On the CPU the same closure
    runs eagerly (smoke test)."""
    opt = adamw(model.parameters(), device, fused, capturable=True)
    static = [t.clone() for t in batch]

    def once():
        opt.zero_grad(set_to_none=True)
        with autocast(device, amp):
            loss = loss_of(model, *static)
        loss.backward()
        opt.step()
        return loss

    if device != "cuda":
        def eager():
            for s, t in zip(static, batch):
                s.copy_(t)
            return once()
        return eager
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):  # warm-up off the capture: lazy inits, optimizer state, compile
            once()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        with autocast(device, amp):
            static_loss = loss_of(model, *static)
        static_loss.backward()
        opt.step()

    def replay():
        for s, t in zip(static, batch):
            s.copy_(t)
        graph.replay()
        return static_loss

    return replay


def train(net, batch, loss_of, fixes, device, amp=False, fused=False, compiled=False, log_loss=False):
    """The training step of a model whose batch is already on the device.
    amp/fused/compiled: what the plain script already does; fixes add to it.
    log_loss: the script appends loss.item() to a list every step."""
    amp = amp or "amp" in fixes
    fused = fused or "fused-optimizer" in fixes
    if "channels-last" in fixes:
        net = net.to(memory_format=torch.channels_last)
        batch = tuple(to_channels_last(t) for t in batch)
    if compiled or "compile" in fixes:
        net = torch.compile(net)
    record = LossLog(log_loss, "host-sync" in fixes)
    if "cuda-graphs" in fixes:
        replay = graphed(net, batch, loss_of, device, amp, fused)

        def graph_step():
            record(replay(), clone=True)  # the .item() stays after the replay unless host-sync

        return graph_step
    opt = adamw(net.parameters(), device, fused)

    def step():
        with autocast(device, amp):
            loss = loss_of(net, *batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        record(loss)

    return step


def classify(m, x, y):
    return F.cross_entropy(m(x), y)


def images(device, batch, size, classes):
    return (torch.randn(batch, 3, size, size, device=device), torch.randint(0, classes, (batch,), device=device))


def timm_model(name, tiny_name, tiny, **kw):
    import timm
    return timm.create_model(tiny_name if tiny else name, **kw)


CONV_FIXES = ["amp", "channels-last", "fused-optimizer", "compile", "cuda-graphs"]
CONV_COMBOS = ["amp+channels-last", "amp+cuda-graphs", "amp+channels-last+cuda-graphs", "amp+compile"]
TRANSFORMER_FIXES = ["amp", "fused-optimizer", "compile", "cuda-graphs"]
TRANSFORMER_COMBOS = ["amp+fused-optimizer", "amp+cuda-graphs", "amp+compile"]


# ---------------------------------------------------------------- models


@model(CONV_FIXES, CONV_COMBOS)
def resnet50(fixes, device, tiny):
    net = timm_model("resnet50", "resnet18", tiny, num_classes=1000).to(device)
    return train(net, images(device, 2 if tiny else 64, 64 if tiny else 224, 1000), classify, fixes, device)


@model(CONV_FIXES, CONV_COMBOS)
def resnet50_gn(fixes, device, tiny):
    net = timm_model("resnet50_gn", "resnet50_gn", tiny, num_classes=1000).to(device)
    return train(net, images(device, 2 if tiny else 32, 64 if tiny else 224, 1000), classify, fixes, device)


class ResBlock(nn.Module):
    """GroupNorm, SiLU, 3x3 conv, twice, plus a skip: a diffusion UNet's block."""

    def __init__(self, cin, cout, groups):
        super().__init__()
        self.block = nn.Sequential(
            nn.GroupNorm(groups, cin), nn.SiLU(), nn.Conv2d(cin, cout, 3, padding=1),
            nn.GroupNorm(groups, cout), nn.SiLU(), nn.Conv2d(cout, cout, 3, padding=1))
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        return self.block(x) + self.skip(x)


class UNet(nn.Module):
    def __init__(self, widths=(64, 128, 256), groups=32):
        super().__init__()
        self.stem = nn.Conv2d(3, widths[0], 3, padding=1)
        self.down = nn.ModuleList()
        self.pool = nn.ModuleList()
        cin = widths[0]
        for w in widths:
            self.down.append(nn.Sequential(ResBlock(cin, w, groups), ResBlock(w, w, groups)))
            self.pool.append(nn.Conv2d(w, w, 3, stride=2, padding=1))
            cin = w
        self.mid = nn.Sequential(ResBlock(cin, cin, groups), ResBlock(cin, cin, groups))
        self.up = nn.ModuleList()
        for w in reversed(widths):
            self.up.append(nn.Sequential(ResBlock(cin + w, w, groups), ResBlock(w, w, groups)))
            cin = w
        self.head = nn.Sequential(nn.GroupNorm(groups, cin), nn.SiLU(), nn.Conv2d(cin, 3, 3, padding=1))

    def forward(self, x):
        h = self.stem(x)
        skips = []
        for block, pool in zip(self.down, self.pool):
            h = block(h)
            skips.append(h)
            h = pool(h)
        h = self.mid(h)
        for block in self.up:
            h = F.interpolate(h, scale_factor=2, mode="nearest")
            h = block(torch.cat([h, skips.pop()], dim=1))
        return self.head(h)


@model(CONV_FIXES, CONV_COMBOS)
def unet_gn(fixes, device, tiny):
    net = (UNet((32, 64), groups=8) if tiny else UNet()).to(device)
    batch, size = (2, 32) if tiny else (16, 128)
    x = torch.randn(batch, 3, size, size, device=device)
    noise = torch.randn_like(x)
    return train(net, (x, noise), lambda m, x, t: F.mse_loss(m(x), t), fixes, device)


@model(TRANSFORMER_FIXES, TRANSFORMER_COMBOS)
def vit_b16(fixes, device, tiny):
    net = timm_model("vit_base_patch16_224", "vit_tiny_patch16_224", tiny, num_classes=1000).to(device)
    return train(net, images(device, 2 if tiny else 32, 224, 1000), classify, fixes, device)


@model(CONV_FIXES, CONV_COMBOS)
def convnext_tiny(fixes, device, tiny):
    net = timm_model("convnext_tiny", "convnext_atto", tiny, num_classes=1000).to(device)
    return train(net, images(device, 2 if tiny else 64, 64 if tiny else 224, 1000), classify, fixes, device)


@model(TRANSFORMER_FIXES, TRANSFORMER_COMBOS)
def bert(fixes, device, tiny):
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128) \
        if tiny else BertConfig()
    net = BertForSequenceClassification(config).to(device)
    net.train()
    batch, seq = (2, 16) if tiny else (32, 128)
    ids = torch.randint(0, config.vocab_size, (batch, seq), device=device)
    labels = torch.randint(0, 2, (batch,), device=device)
    return train(net, (ids, labels), lambda m, i, l: m(input_ids=i, labels=l).loss, fixes, device)


@model(TRANSFORMER_FIXES, TRANSFORMER_COMBOS)
def t5_small(fixes, device, tiny):
    from transformers import T5Config, T5ForConditionalGeneration

    if tiny:
        config = T5Config(d_model=64, d_ff=128, d_kv=16, num_layers=2, num_heads=4, vocab_size=1000)
    else:
        config = T5Config(d_model=512, d_ff=2048, num_layers=6, num_heads=8, vocab_size=32128, decoder_start_token_id=0, pad_token_id=0)
    net = T5ForConditionalGeneration(config).to(device)
    net.train()
    batch, src, tgt = (2, 16, 8) if tiny else (16, 256, 64)
    ids = torch.randint(0, config.vocab_size, (batch, src), device=device)
    labels = torch.randint(0, config.vocab_size, (batch, tgt), device=device)
    return train(net, (ids, labels), lambda m, i, l: m(input_ids=i, labels=l).loss, fixes, device)


@model(["compile", "cuda-graphs"], [])
def gpt_bf16(fixes, device, tiny):
    """Already in bf16 autocast with fused AdamW and SDPA attention: only
    compile and CUDA graphs are left to apply."""
    from transformers import GPT2Config, GPT2LMHeadModel

    sizes = dict(n_embd=64, n_layer=2, n_head=2, vocab_size=1000) if tiny else {}
    try:
        config = GPT2Config(n_positions=1024, attn_implementation="sdpa", **sizes)
        net = GPT2LMHeadModel(config)
    except Exception:  # a transformers whose GPT-2 has no SDPA path: a small Llama has one
        from transformers import LlamaConfig, LlamaForCausalLM
        config = LlamaConfig(hidden_size=64 if tiny else 768, intermediate_size=128 if tiny else 3072,
                             num_hidden_layers=2 if tiny else 12, num_attention_heads=2 if tiny else 12,
                             vocab_size=1000 if tiny else 50257, max_position_embeddings=1024,
                             attn_implementation="sdpa")
        net = LlamaForCausalLM(config)
    net = net.to(device)
    net.train()
    batch, seq = (2, 32) if tiny else (8, 512)
    ids = torch.randint(0, config.vocab_size, (batch, seq), device=device)
    return train(net, (ids,), lambda m, i: m(input_ids=i, labels=i).loss, fixes, device, amp=True, fused=True)


class LstmLM(nn.Module):
    def __init__(self, vocab, emb, hidden):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=2, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, ids):
        h, _ = self.lstm(self.emb(ids))
        return self.out(h)


@model(["amp", "host-sync", "cuda-graphs", "compile", "fused-optimizer"],
       ["host-sync+cuda-graphs", "amp+host-sync", "amp+host-sync+cuda-graphs", "fused-optimizer+host-sync"])
def lstm_lm(fixes, device, tiny):
    """Logs loss.item() every step, as most training loops do."""
    vocab, emb, hidden, batch, seq = (1000, 32, 64, 2, 16) if tiny else (10000, 512, 1024, 32, 128)
    net = LstmLM(vocab, emb, hidden).to(device)
    ids = torch.randint(0, vocab, (batch, seq + 1), device=device)
    x, y = ids[:, :-1].contiguous(), ids[:, 1:].contiguous()

    def loss_of(m, x, y):
        return F.cross_entropy(m(x).reshape(-1, vocab), y.reshape(-1))

    return train(net, (x, y), loss_of, fixes, device, log_loss=True)


@model(["amp", "compile", "fused-optimizer", "channels-last"], ["amp+channels-last", "amp+fused-optimizer"])
def detector(fixes, device, tiny):
    """torchvision Faster R-CNN in train mode: proposals and sampled boxes give
    dynamic shapes, so no CUDA graphs."""
    import torchvision

    net = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_fpn(
        weights=None, weights_backbone=None, num_classes=91).to(device)
    net.train()
    batch, size = (2, 128) if tiny else (4, 512)
    imgs = [torch.rand(3, size, size, device=device) for _ in range(batch)]
    targets = []
    for _ in range(batch):
        xy = torch.rand(5, 2, device=device) * (size * 0.6)
        wh = torch.rand(5, 2, device=device) * (size * 0.3) + 8
        targets.append({"boxes": torch.cat([xy, xy + wh], dim=1),
                        "labels": torch.randint(1, 91, (5,), device=device)})
    amp = "amp" in fixes
    if "channels-last" in fixes:
        net = net.to(memory_format=torch.channels_last)
        imgs = [i.contiguous(memory_format=torch.channels_last) for i in imgs]
    if "compile" in fixes:
        net = torch.compile(net)
    opt = adamw(net.parameters(), device, "fused-optimizer" in fixes)

    def step():
        with autocast(device, amp):
            losses = net(imgs, targets)
            loss = sum(losses.values())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def _cpu_heavy_dataset():
    """The CPU-heavy Dataset of tests/gpu/models/real_models.py (torch CPU ops per
    item, as a torchvision transform pipeline would), one definition for both harnesses."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
    from real_models import CpuHeavyDataset
    return CpuHeavyDataset


def endless(loader):
    """Batches forever, a new epoch when one ends (timed runs outlast an epoch in tiny mode)."""
    while True:
        for b in loader:
            yield b


@model(["dataloader-stall", "amp", "channels-last"],
       ["amp+dataloader-stall", "amp+channels-last", "amp+channels-last+dataloader-stall"], steps=20)
def dataloader_cpu(fixes, device, tiny):
    """torchvision ResNet-18 fed by a CPU-heavy Dataset in the main process."""
    import torchvision

    net = torchvision.models.resnet18(num_classes=100).to(device)
    workers = "dataloader-stall" in fixes
    loader = torch.utils.data.DataLoader(
        _cpu_heavy_dataset()(64 if tiny else 100000), batch_size=4 if tiny else 64, shuffle=True,
        num_workers=8 if workers else 0, pin_memory=workers and device == "cuda",
        persistent_workers=workers, drop_last=True)
    channels_last = "channels-last" in fixes
    if channels_last:
        net = net.to(memory_format=torch.channels_last)
    amp = "amp" in fixes
    opt = adamw(net.parameters(), device, False)
    batches = endless(loader)

    def step():
        x, y = next(batches)
        x, y = x.to(device, non_blocking=workers), y.to(device, non_blocking=workers)
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        with autocast(device, amp):
            loss = F.cross_entropy(net(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


@model(["amp", "channels-last", "cuda-graphs"], ["amp+channels-last", "amp+cuda-graphs", "amp+channels-last+cuda-graphs"])
def compiled_convnet(fixes, device, tiny):
    """Already torch.compile'd (default mode); CUDA graphs capture the compiled step."""
    try:
        net = timm_model("resnet18", "resnet18", tiny, num_classes=1000)
    except ImportError:  # the smoke test's machine has no timm
        import torchvision
        net = torchvision.models.resnet18(num_classes=1000)
    net = net.to(device)
    return train(net, images(device, 2 if tiny else 64, 64 if tiny else 224, 1000), classify, fixes, device,
                 compiled=True)


@model(["amp", "fused-optimizer"], ["amp+fused-optimizer"])
def graphed_mlp(fixes, device, tiny):
    """Already captured whole in a CUDA graph (launch-bound without one)."""
    width, batch = (64, 8) if tiny else (1024, 256)
    layers = []
    for _ in range(8):
        layers += [nn.Linear(width, width), nn.LayerNorm(width), nn.GELU()]
    net = nn.Sequential(*layers, nn.Linear(width, 10)).to(device)
    x = torch.randn(batch, width, device=device)
    y = torch.randint(0, 10, (batch,), device=device)
    return train(net, (x, y), classify, fixes | {"cuda-graphs"}, device)


@model(["pageable-memcpy", "amp"], ["amp+pageable-memcpy"])
def pageable_copy(fixes, device, tiny):
    """A 64 MB batch copied from pageable host memory every step (as a numpy-backed batch is)."""
    width = 256 if tiny else 4096
    pinned = "pageable-memcpy" in fixes
    host = torch.randn(width, width)
    if pinned and device == "cuda":
        host = host.pin_memory()
    net = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width)).to(device)
    opt = adamw(net.parameters(), device, False)
    amp = "amp" in fixes

    def step():
        x = host.to(device, non_blocking=pinned)
        with autocast(device, amp):
            loss = net(x).float().pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


@model(["amp", "compile", "fused-optimizer"], ["amp+fused-optimizer", "amp+compile"])
def gcn(fixes, device, tiny):
    """torch_geometric 3-layer GCN, full-graph node classification on a random graph."""
    from torch_geometric.nn import GCNConv

    nodes, edges, feats, hidden, classes = (500, 5000, 16, 32, 8) if tiny else (50000, 500000, 128, 256, 40)

    class GCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = nn.ModuleList([GCNConv(feats, hidden), GCNConv(hidden, hidden), GCNConv(hidden, classes)])

        def forward(self, x, edge_index):
            for i, conv in enumerate(self.convs):
                x = conv(x, edge_index)
                if i < len(self.convs) - 1:
                    x = F.relu(x)
            return x

    net = GCN().to(device)
    x = torch.randn(nodes, feats, device=device)
    edge_index = torch.randint(0, nodes, (2, edges), device=device)
    y = torch.randint(0, classes, (nodes,), device=device)
    return train(net, (x, edge_index, y), lambda m, x, e, y: F.cross_entropy(m(x, e), y), fixes, device)
