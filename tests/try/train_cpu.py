"""A small CPU training loop for `gpuscope try`'s tests (tests/try/): a conv
net on random images through a DataLoader, Adam, an optimizer step per step.
TRY_TEST_FAIL=VARIANT makes the run of that variant fail (as an OOM would),
TRY_TEST_PIDS=FILE records the pids of the job and its DataLoader workers,
TRY_TEST_STEPS bounds the loop (default: run until stopped), TRY_TEST_WORKERS
gives the DataLoader workers of its own (default none). TRY_TEST_SLOW=VARIANT:N:FILE
makes the N-th run of that variant (counted in FILE) sleep TRY_TEST_SLOW_MS (default 20)
in every step, as a machine that slows down for one round would."""
import os
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i % 64)
        if os.environ.get("TRY_TEST_PIDS"):
            with open(os.environ["TRY_TEST_PIDS"], "a") as f:
                f.write("%d\n" % os.getpid())
        return torch.randn(3, 32, 32, generator=g), i % 10


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = torch.relu(self.conv2(x))
        return self.head(x.mean(dim=(2, 3)))


def main():
    fail = os.environ.get("TRY_TEST_FAIL")
    if fail is not None and os.environ.get("GPUSCOPE_TRY") == fail:
        raise RuntimeError("out of memory (planted by the test for variant %s)" % fail)
    slow_s = 0.0
    if os.environ.get("TRY_TEST_SLOW"):
        variant, nth, counter = os.environ["TRY_TEST_SLOW"].split(":", 2)
        if os.environ.get("GPUSCOPE_TRY") == variant:
            with open(counter, "a+") as f:
                f.seek(0)
                seen = len(f.read().splitlines()) + 1
                f.write("%d\n" % os.getpid())
            if seen == int(nth):
                slow_s = float(os.environ.get("TRY_TEST_SLOW_MS", "20")) / 1000
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Net()
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(Images(), batch_size=16, num_workers=int(os.environ.get("TRY_TEST_WORKERS", "0")))
    limit = int(os.environ.get("TRY_TEST_STEPS", "0"))
    if os.environ.get("TRY_TEST_PIDS"):
        with open(os.environ["TRY_TEST_PIDS"], "a") as f:
            f.write("%d\n" % os.getpid())
    for step, (x, y) in enumerate(loader):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.float().backward()
        opt.step()
        if slow_s:
            time.sleep(slow_s)
        if limit and step + 1 >= limit:
            break
    print("done", step + 1)


if __name__ == "__main__":
    main()
