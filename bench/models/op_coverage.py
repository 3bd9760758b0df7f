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

con = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
q1 = lambda sql: con.execute(sql).fetchone()[0]
meta = dict(con.execute("SELECT key, value FROM meta"))
total = q1('SELECT coalesce(sum("end" - start), 0) FROM kernel') or 0
linked = q1('SELECT coalesce(sum(k."end" - k.start), 0) FROM kernel k WHERE k.correlation != 0 AND EXISTS '
            '(SELECT 1 FROM external_correlation e JOIN op o ON o.pid = e.pid AND o.external_id = e.external_id '
            'WHERE e.pid = k.pid AND e.correlation = k.correlation)') or 0
print(json.dumps({
    "kernel_time_linked_pct": round(100.0 * linked / total, 2) if total else None,
    "ops": q1("SELECT count(*) FROM op"),
    "ops_placed": int(meta.get("ops_placed", 0)),
    "placed_steps": int(meta.get("ops_placed_steps", 0)),
    "unplaced_steps": int(meta.get("ops_unplaced_steps", 0)),
    "op_steps": meta.get("torch_op_steps"),
    "op_steps_changed": meta.get("torch_op_steps_changed"),
}))
