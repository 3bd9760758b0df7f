#!/usr/bin/env python3
"""What a recording's ops cover, as one JSON line (the overhead stage of
tests/gpu/models/advisor_models.sh adds it to each traced run):

  op_coverage.py RUN.db

kernel_time_linked_pct: share of kernel time whose launch is linked to an op
(kernel.correlation -> external_correlation -> op.external_id); ops, and of
them ops_placed (given by position, GPUSCOPE_TORCH_OP_STEPS); the steps placed
and not placed; the op-steps setting the plugin used."""
import json
import sqlite3
import sys



def linked_kernel_time_pct(con, start=None, end=None):
    """Share of kernel time (kernels starting in [start, end) when given) whose
    launch is linked to an op; None without kernels. Joined here: SQLite has
    no index on these columns, and the JOIN in SQL took minutes."""
    op_ids = {(pid, x) for pid, x in con.execute("SELECT pid, external_id FROM op WHERE external_id IS NOT NULL")}
    linked_corr = {(pid, c) for pid, c, x in con.execute("SELECT pid, correlation, external_id FROM external_correlation")
                   if (pid, x) in op_ids}
    window = "" if start is None else " WHERE start >= %d AND start < %d" % (start, end)
    total = linked = 0
    for pid, corr, dur in con.execute('SELECT pid, correlation, "end" - start FROM kernel' + window):
        total += dur
        if corr and (pid, corr) in linked_corr:
            linked += dur
    return round(100.0 * linked / total, 2) if total else None


def coverage(path):
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    meta = dict(con.execute("SELECT key, value FROM meta"))
    return {
        "kernel_time_linked_pct": linked_kernel_time_pct(con),
        "ops": con.execute("SELECT count(*) FROM op").fetchone()[0],
        "ops_placed": int(meta.get("ops_placed", 0)),
        "placed_steps": int(meta.get("ops_placed_steps", 0)),
        "unplaced_steps": int(meta.get("ops_unplaced_steps", 0)),
        "op_steps": meta.get("torch_op_steps"),
        "op_steps_changed": meta.get("torch_op_steps_changed"),
    }


if __name__ == "__main__":
    print(json.dumps(coverage(sys.argv[1])))
