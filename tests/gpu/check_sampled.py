#!/usr/bin/env python3
"""Checks a recording made with GPU tracing in a duty cycle (GPUSCOPE_SAMPLE_MS=ON,OFF):
kernels arrive in bursts no longer than ON ms (plus one tick), separated by gaps of
about OFF ms, more than one burst (tracing resumed), zero dropped records.
Usage: check_sampled.py RUN.db ON_MS OFF_MS"""
import sqlite3
import sys

db, on_ms, off_ms = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
c = sqlite3.connect(db)
starts = [r[0] for r in c.execute("SELECT start FROM kernel ORDER BY start")]
stats = dict(c.execute("SELECT key, value FROM collector_stat"))
bursts = []
for t in starts:
    if bursts and t - bursts[-1][1] < off_ms * 0.5e6:
        bursts[-1][1] = t
        bursts[-1][2] += 1
    else:
        bursts.append([t, t, 1])
print(f"{db}: {len(starts)} kernels in {len(bursts)} bursts; pauses {stats.get('tracing_pauses')}, "
      f"dropped {stats.get('dropped_cupti')}")
for b0, b1, n in bursts:
    print(f"  burst at {b0 / 1e9:.3f} s: {(b1 - b0) / 1e6:.1f} ms, {n} kernels")
gaps = [(bursts[i + 1][0] - bursts[i][1]) / 1e6 for i in range(len(bursts) - 1)]
ok = len(bursts) >= 2 and stats.get("dropped_cupti", 0) == 0
ok = ok and all((b1 - b0) / 1e6 <= on_ms + 150 for b0, b1, _ in bursts)
ok = ok and all(g >= off_ms - 150 for g in gaps)
print("PASS" if ok else "FAIL", "gaps (ms):", [round(g) for g in gaps])
sys.exit(0 if ok else 1)
