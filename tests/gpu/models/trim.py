"""Makes a recording small enough for tests/data: keeps everything up to the
end of the Nth traced step after the last untraced (control) step, drops the
rest, and vacuums. Without a control stretch, keeps the first N steps after
the first three.

  python3 tests/gpu/models/trim.py IN.db OUT.db [--traced-steps 6]
"""

import argparse
import os
import shutil
import sqlite3
import sys

EVENT_TABLES = ["kernel", "memcpy", "memset", "api_call", "sync", "graph_launch", "range", "op"]
POINT_TABLES = ["memory_event", "counter"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--traced-steps", type=int, default=6)
    p.add_argument("--drop-warmup", action="store_true",
                   help="also drop the events (not the steps and ranges) before the first untraced step: "
                        "the analyzer leaves those warm-up steps out anyway")
    args = p.parse_args()
    if os.path.exists(args.dst):
        sys.exit("trim.py: %s: already exists" % args.dst)
    part = args.dst + ".part"
    shutil.copyfile(args.src, part)
    db = sqlite3.connect(part)
    pid = db.execute("select pid from step group by pid order by count(*) desc limit 1").fetchone()
    if pid is None:
        sys.exit("trim.py: %s: no steps" % args.src)
    pid = pid[0]
    steps = db.execute("select number, start, end from step where pid = ? order by start", (pid,)).fetchall()
    windows = db.execute("select start, end from range where source = 7 and pid = ? order by start", (pid,)).fetchall()

    def traced(s):
        return not windows or any(a <= s[1] and s[2] <= b for a, b in windows)

    last_untraced = max((i for i, s in enumerate(steps) if not traced(s)), default=2)
    keep = min(len(steps) - 1, last_untraced + args.traced_steps)
    cutoff = steps[keep][2]
    # The GPU runs behind the CPU, by many steps in a GPU-bound job: CPU-side
    # events are kept up to three steps later, GPU work by its launch (the
    # API call with its correlation id) up to that point, so the kept steps'
    # kernels are whole. With fewer steps left, nothing is cut (trimming a trimmed file).
    if keep + 3 < len(steps):
        events_cutoff = steps[keep + 3][2]
        for t in ["api_call", "sync", "range", "op"]:
            db.execute("delete from %s where start > ?" % t, (events_cutoff,))
        for t in ["kernel", "memcpy", "memset", "graph_launch"]:
            db.execute("delete from %s where start > ? and (correlation is null or correlation = 0 or "
                       "not exists (select 1 from api_call a where a.pid = %s.pid and a.correlation = %s.correlation))"
                       % (t, t, t), (events_cutoff,))
        last_gpu = db.execute("select max(e) from (select max(\"end\") e from kernel union all "
                              "select max(\"end\") from memcpy union all select max(\"end\") from memset)").fetchone()[0]
        for t in POINT_TABLES:
            db.execute("delete from %s where ts > ?" % t, (max(events_cutoff, last_gpu or 0),))
    db.execute("delete from step where start > ?", (cutoff,))
    first_untraced = min((i for i, s in enumerate(steps) if not traced(s)), default=None)
    if args.drop_warmup and first_untraced is not None:
        begin = steps[first_untraced][1]
        for t in EVENT_TABLES:
            if t != "range":
                db.execute("delete from %s where start < ?" % t, (begin,))
        for t in POINT_TABLES:
            db.execute("delete from %s where ts < ?" % t, (begin,))
    db.execute("delete from external_correlation where correlation not in (select correlation from api_call)")
    db.commit()
    db.execute("vacuum")
    db.close()
    os.rename(part, args.dst)
    print("%s: kept %d of %d steps (cut at %d ns), %d bytes" % (args.dst, keep + 1, len(steps), cutoff,
                                                               os.path.getsize(args.dst)))


if __name__ == "__main__":
    main()
