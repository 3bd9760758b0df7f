#!/usr/bin/env python3
"""Compares kernels recorded by gpuscope with torch.profiler's trace of the same
script: the profiled kernels are the last K kernels of the recording (the
recording also holds set-up work before the profiler starts). Checks count and
name multiset exactly and total kernel time within 1 %."""
import collections
import gzip
import json
import sqlite3
import sys

db, trace_path = sys.argv[1], sys.argv[2]
opener = gzip.open if trace_path.endswith(".gz") else open
trace = json.load(opener(trace_path, "rt"))
prof = [e for e in trace["traceEvents"] if e.get("cat") == "kernel" and e.get("ph") == "X"]
k = len(prof)
prof_total_us = sum(float(e["dur"]) for e in prof)
con = sqlite3.connect(db)
rows = con.execute("select s.value, k.\"end\" - k.start from kernel k join string s on s.id=k.name_id "
                   "order by k.start desc limit ?", (k,)).fetchall()
total_rec = con.execute("select count(*) from kernel").fetchone()[0]
gs_total_us = sum(d for _, d in rows) / 1000.0
same_names = collections.Counter(n for n, _ in rows) == collections.Counter(e["name"] for e in prof)
diff_pct = 100.0 * (gs_total_us - prof_total_us) / prof_total_us if prof_total_us else float("nan")
dropped = con.execute("select coalesce(sum(value),0) from collector_stat where key like 'dropped%'").fetchone()[0]
print(f"torch.profiler kernels {k}, total {prof_total_us/1000:.3f} ms; gpuscope recorded {total_rec} kernels, "
      f"last {len(rows)} total {gs_total_us/1000:.3f} ms; diff {diff_pct:+.3f} %; same names: {same_names}; dropped {dropped}")
ok = len(rows) == k and same_names and abs(diff_pct) <= 1.0 and dropped == 0
print("ok  " if ok else "FAIL", "kernel count and total time agree with torch.profiler")
sys.exit(0 if ok else 1)
