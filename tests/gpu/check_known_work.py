#!/usr/bin/env python3
"""Compares a recording of samples/cuda/known_work with the exact totals the
program declares (--expect). Prints one line per check; exit 1 on a mismatch."""
import json
import sqlite3
import sys

db, expect_path = sys.argv[1], sys.argv[2]
exp = json.load(open(expect_path))
con = sqlite3.connect(db)
q = lambda sql: con.execute(sql).fetchall()
bad = 0


def check(what, got, want):
    global bad
    ok = got == want
    bad += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {what}: recorded {got}, expected {want}")


kernels = dict(q("select s.value, count(*) from kernel k join string s on s.id=k.name_id group by 1"))
for name, n in exp["kernels"].items():
    check(f"kernel {name} count", kernels.get(name, 0), n)
check("kernel count", sum(kernels.values()), exp["kernel_count"])
kinds = {0: "unknown", 1: "pageable", 2: "pinned", 3: "device"}
dirs = {1: "HtoD", 2: "DtoH", 8: "DtoD"}
rows = q("select copy_kind, src_kind, dst_kind, count(*), sum(bytes) from memcpy group by 1,2,3")
got = {(dirs.get(c, str(c)), kinds.get(s, str(s)), kinds.get(d, str(d))): (n, b) for c, s, d, n, b in rows}
for m in exp["memcpy"]:
    key = (m["direction"], m["src_kind"], m["dst_kind"])
    check(f"memcpy {key} count/bytes", got.get(key, (0, 0)), (m["count"], m["bytes"]))
check("memcpy count", sum(n for n, _ in got.values()), exp["memcpy_count"])
check("memcpy bytes", sum(b for _, b in got.values()), exp["memcpy_bytes"])
check("memset count/bytes", tuple(q("select count(*), coalesce(sum(bytes),0) from memset")[0]),
      (exp["memset_count"], exp["memset_bytes"]))
ranges = dict(q("select s.value, count(*) from range r join string s on s.id=r.name_id group by 1"))
for name, n in exp["nvtx_ranges"].items():
    check(f"NVTX range {name}", ranges.get(name, 0), n)
check("streams with kernels", q("select count(distinct stream) from kernel")[0][0], exp["streams"])
check("dropped records", q("select coalesce(sum(value),0) from collector_stat where key like 'dropped%'")[0][0], 0)
print("threads with CUDA calls:", q("select count(distinct tid) from api_call")[0][0],
      "expected", exp.get("threads_calling_cuda"))
print("top API calls:", q("select s.value, count(*) from api_call a join string s on s.id=a.name_id group by 1 order by 2 desc limit 12"))
print("devices:", q("select * from device"))
print("stats:", q("select key, value from collector_stat"))
sys.exit(1 if bad else 0)
