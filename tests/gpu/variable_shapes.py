#!/usr/bin/env python3
"""Ops in some steps only, on a job whose shapes change from step to step (GPU machine).

  variable_shapes.py train [--steps N]       the job: a transformer encoder whose
                                             sequence length changes every step
  variable_shapes.py check RUN.db            the recording, made with `gpuscope record`'s default

The default records ops in 2 steps of every 50 and places them by position in
the others; a step with other shapes must not get the ops of one with other
shapes. So the plugin, seeing two recorded steps in a row differ, records ops in
every step from there on (meta torch_op_steps_changed = 0), and the recording
links at least 95 % of the kernel time of the steps after that to an op.
Exit 0 when all hold."""
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "models"))
import op_coverage  # noqa: E402


def train(steps):
    import torch
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=4).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    lengths = [64, 96, 128, 80, 112]
    for step in range(steps):
        x = torch.randn(16, lengths[step % len(lengths)], 256, device="cuda")
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()
    torch.cuda.synchronize()
    print("trained %d steps" % steps)


def check(db):
    failures = []

    def ok(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    meta = dict(con.execute("SELECT key, value FROM meta"))
    ok(meta.get("torch_op_steps") == "2/50", "ops in 2 steps of every 50 to begin with: %s" % meta.get("torch_op_steps"))
    ok(meta.get("torch_op_steps_changed") == "0", "the plugin saw the shapes change and went to every step")
    print(json.dumps(op_coverage.coverage(db)))
    # The steps after the switch: the last 20.
    steps = con.execute('SELECT start, "end" FROM step ORDER BY start').fetchall()[-20:]
    pct = op_coverage.linked_kernel_time_pct(con, steps[0][0], steps[-1][1]) or 0.0
    ok(pct >= 95.0, "%.1f %% of the kernel time of the last 20 steps linked to an op (>= 95 %%)" % pct)
    messages = [m for (m,) in con.execute("SELECT text FROM message")]
    ok(any("shapes change" in m for m in messages), "the message table says why")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["train"]:
        train(int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--steps" else 80)
    elif sys.argv[1:2] == ["check"]:
        sys.exit(check(sys.argv[2]))
    else:
        sys.exit(__doc__)
