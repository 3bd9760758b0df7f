"""host-sync: per-layer activation statistics and per-parameter gradient norms
logged with .item() inside the step: every .item() waits for the GPU to
finish everything queued, then the GPU idles while Python launches the next
kernels. --fixed keeps the values on the GPU (torch.stack), copies them to pinned
memory without blocking, and reads them one step later after waiting only for
that copy's event: the GPU never runs dry.

  python host-sync.py --steps 30 [--fixed]
"""

import torch
from torch import nn

import advisor_common as common


def main():
    args, device = common.finish(common.parser(__doc__.splitlines()[0], cpu_steps=3, cuda_steps=30).parse_args())
    cuda = device.type == "cuda"
    batch, width, layers = (4096, 4096, 12) if cuda else (64, 128, 3)
    blocks = nn.ModuleList([nn.Sequential(nn.Linear(width, width), nn.GELU()) for _ in range(layers)]).to(device)
    opt = common.optimizer(blocks.parameters(), device)
    x0 = torch.randn(batch, width, device=device)
    log = []
    pending = {}  # --fixed: last step's values in pinned memory, and the event after their copy

    def step(_):
        stats = []
        h = x0
        with common.autocast(device):
            for b in blocks:
                h = b(h)
                stat = h.detach().abs().mean().float()
                # The anti-pattern: read each statistic as soon as it is computed.
                stats.append(stat if args.fixed else stat.item())
            loss = h.float().square().mean()
        loss.backward()
        norms = [p.grad.norm() for p in blocks.parameters()]
        if args.fixed:
            if pending:
                if cuda:
                    pending["event"].synchronize()  # last step's copy; this step keeps the GPU busy
                log.append(pending["host"].tolist())
            values = torch.cat([torch.stack(stats), torch.stack(norms)])
            if "host" not in pending:
                pending["host"] = torch.empty(values.shape, dtype=values.dtype, pin_memory=cuda)
            pending["host"].copy_(values, non_blocking=cuda)
            if cuda:
                pending["event"] = torch.cuda.Event()
                pending["event"].record()
        else:
            log.append(stats + [n.item() for n in norms])
        opt.step()
        opt.zero_grad(set_to_none=True)
        del log[:-4]

    times = common.run(args, device, step)
    syncs = 0 if args.fixed else layers + 2 * layers
    common.report("host-sync", args, device, times, layers=layers, item_calls_per_step=syncs)


if __name__ == "__main__":
    main()
