"""A 2-rank DistributedDataParallel job over the gloo backend (or NCCL: --backend nccl).

Each rank trains the same tiny model on its own data; DDP all-reduces the
gradients every step, so the trace shows communication between steps and one
process per rank. Launch it with torchrun (which sets RANK, WORLD_SIZE,
LOCAL_RANK, MASTER_ADDR and MASTER_PORT):

  torchrun --nproc_per_node=2 ddp_gloo.py --steps 5
  python -m torch.distributed.run --nproc_per_node=2 ddp_gloo.py --device cpu
  torchrun --nproc_per_node=2 ddp_gloo.py --backend nccl      # one GPU per rank

Every rank prints its own GPUSCOPE_SAMPLE line, with its rank.

Batches come from a DataLoader (no workers) over a Dataset that hands out each
rank's batch. --straggler-rank R --straggler-ms M makes rank R's Dataset sleep
M ms more per batch: rank R arrives late at every gradient all-reduce and the
other ranks wait for it there (gpuscope's `straggler` and `collective-wait`);
--data-ms M makes every rank's Dataset sleep M ms per batch.
"""

import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import sample_common


class Batches(torch.utils.data.Dataset):
    """The rank's one batch, `count` times; sleeps `sleep_s` per batch (a slow Dataset)."""

    def __init__(self, inputs, targets, count, sleep_s):
        self.inputs, self.targets, self.count, self.sleep_s = inputs, targets, count, sleep_s

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        if self.sleep_s > 0:
            time.sleep(self.sleep_s)
        return self.inputs, self.targets


def main():
    parser = sample_common.base_parser(__doc__.splitlines()[0], cpu_steps=5, cuda_steps=20)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--layers", type=int, default=1,
                        help="hidden layers of width x width: with many, DDP all-reduces its gradient "
                             "buckets while backward still computes the earlier layers")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--backend", choices=["gloo", "nccl"], default="gloo",
                        help="nccl needs --device cuda and one GPU per rank")
    parser.add_argument("--straggler-rank", type=int, default=-1,
                        help="this rank's Dataset sleeps --straggler-ms more per batch")
    parser.add_argument("--straggler-ms", type=float, default=0.0)
    parser.add_argument("--data-ms", type=float, default=0.0,
                        help="every rank's Dataset sleeps this long per batch (a uniform input pipeline cost)")
    args = sample_common.finish_args(parser.parse_args())
    if args.backend == "nccl" and args.device != "cuda":
        raise SystemExit("ddp_gloo.py: --backend nccl needs --device cuda")
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        raise SystemExit("ddp_gloo.py: RANK/WORLD_SIZE not set; launch with torchrun --nproc_per_node=2")
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))

    if args.device == "cuda":
        # gloo also moves CUDA tensors; several ranks may share one GPU.
        device = torch.device("cuda", local_rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    dist.init_process_group(args.backend, rank=rank, world_size=world_size)
    if args.profile:
        # One trace per rank, or the ranks would overwrite each other's file.
        root, ext = os.path.splitext(args.profile)
        args.profile = "%s.rank%d%s" % (root, rank, ext or ".json")

    torch.manual_seed(0)  # same initial weights on every rank (DDP also broadcasts them)
    hidden = []
    for _ in range(args.layers):
        hidden += [nn.Linear(args.width, args.width), nn.ReLU()]
    model = nn.Sequential(*hidden, nn.Linear(args.width, 10)).to(device)
    ddp_model = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=1e-2)
    loss_fn = nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(rank)  # different data per rank
    inputs = torch.randn(args.batch, args.width, generator=generator).to(device)
    targets = torch.randint(0, 10, (args.batch,), generator=generator).to(device)
    sleep_s = (args.data_ms + (args.straggler_ms if rank == args.straggler_rank else 0.0)) / 1000.0
    loader = torch.utils.data.DataLoader(Batches(inputs, targets, args.warmup + args.steps, sleep_s),
                                         batch_size=None, num_workers=0)
    batches = iter(loader)

    def step(_):
        inputs, targets = next(batches)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(ddp_model(inputs), targets)
        loss.backward()  # gradients are all-reduced here
        optimizer.step()

    times_ms = sample_common.run_steps(args, device, step)
    # Identical weights on every rank are the proof that the all-reduce ran.
    checksum = sum(float(p.detach().double().sum()) for p in model.parameters())
    dist.barrier()
    dist.destroy_process_group()
    sample_common.report("ddp_gloo", args, device, times_ms, rank=rank, world_size=world_size,
                         backend=args.backend, pid=os.getpid(), weight_checksum=round(checksum, 6))


if __name__ == "__main__":
    main()
