#!/usr/bin/env python3
"""The torch plugin checks against torch.profiler on the same script (issue 3):

  compare_links.py RUN.db TRACE.json SAMPLE_STDOUT

- at least 95 % of the recording's kernel time is linked to an op
  (kernel.correlation -> external_correlation -> op.external_id);
- for the 20 ops with the most linked GPU time in torch.profiler's trace, the
  kernels linked to an op of that name (its `External id`) are the same kernel
  names, in the same number per step, in both;
- DataLoader share of step time within 5 percentage points of torch.profiler's;
- the allocator peak recorded equals torch.cuda.max_memory_allocated() printed
  by the script (GPUSCOPE_SAMPLE line) within 1 %.
Exit 0 when all hold."""
import collections
import gzip
import json
import sqlite3
import sys

db_path, trace_path, sample_path = sys.argv[1:4]
opener = gzip.open if trace_path.endswith(".gz") else open
trace = json.load(opener(trace_path, "rt"))
events = [e for e in (trace["traceEvents"] if isinstance(trace, dict) else trace) if e.get("ph") == "X"]
failures = []


def check(ok, what):
    print("ok  " if ok else "FAIL", what)
    if not ok:
        failures.append(what)


# torch.profiler: op External id -> op name; kernels -> their op.
op_name = {}
for e in events:
    if e.get("cat") in ("cpu_op",) and "External id" in e.get("args", {}):
        op_name[e["args"]["External id"]] = e["name"]
# ProfilerStep#N appears twice: on the CPU (user_annotation / cpu_op) and as a
# gpu_user_annotation on the stream; the steps are the CPU ones.
# The last one, opened by the final prof.step(), holds no work: count steps
# that launched something.
launches = sorted(float(e["ts"]) for e in events if e.get("cat") == "cuda_runtime")
prof_steps = [e for e in events if e.get("name", "").startswith("ProfilerStep#") and not e.get("cat", "").startswith("gpu_")
              and (not launches or any(float(e["ts"]) <= t <= float(e["ts"]) + float(e["dur"]) for t in launches))]
prof_links = collections.defaultdict(collections.Counter)
prof_time = collections.Counter()
for e in events:
    if e.get("cat") != "kernel":
        continue
    name = op_name.get(e.get("args", {}).get("External id"))
    if name is not None:
        prof_links[name][e["name"]] += 1
        prof_time[name] += float(e["dur"])

con = sqlite3.connect(db_path)
q = lambda sql, *p: con.execute(sql, p).fetchall()
ext = {(pid, c): x for pid, c, x in q("select pid, correlation, external_id from external_correlation")}
ops = {(pid, x): n for pid, x, n in q("select o.pid, o.external_id, s.value from op o join string s on s.id = o.name_id "
                                      "where o.external_id is not null")}
# The steps the profiler saw: torch.profiler runs only the measured steps, the
# recording also holds the warm-up ones, so compare per step.
gs_steps = q("select count(*) from step where source = (select min(source) from step)")[0][0]
gs_links = collections.defaultdict(collections.Counter)
total = linked = 0
for pid, corr, name, dur in q("select k.pid, k.correlation, s.value, k.\"end\" - k.start from kernel k "
                              "join string s on s.id = k.name_id"):
    total += dur
    op = ops.get((pid, ext.get((pid, corr))))
    if op is not None:
        linked += dur
        gs_links[op][name] += 1
linked_pct = 100.0 * linked / total if total else 0.0
check(linked_pct >= 95.0, f"{linked_pct:.2f} % of kernel time ({total / 1e6:.3f} ms) linked to an op (>= 95 %)")

top = [name for name, _ in prof_time.most_common(20)]
print(f"steps: torch.profiler {len(prof_steps)}, gpuscope {gs_steps}")
mismatched = 0
for name in top:
    p, g = prof_links[name], gs_links.get(name, collections.Counter())
    p_per_step = {k: v / max(len(prof_steps), 1) for k, v in p.items()}
    g_per_step = {k: v / max(gs_steps, 1) for k, v in g.items()}
    same_names = set(p) == set(g)
    # Same script, same steps: the counts match exactly; with a different number
    # of steps, per step within 10 % (one-time work differs).
    close = same_names and (p == g or all(abs(p_per_step[k] - g_per_step[k]) <= 0.1 * p_per_step[k] + 0.05 for k in p))
    if not close:
        mismatched += 1
    print(f"  {'same' if close else 'DIFF'} {name}: {sum(p.values())} kernels in torch.profiler "
          f"({len(p)} names), {sum(g.values())} in gpuscope ({len(g)} names)"
          + ("" if same_names else f"; only torch.profiler: {sorted(set(p) - set(g))[:3]} only gpuscope: {sorted(set(g) - set(p))[:3]}"))
check(top and mismatched == 0, f"kernels linked to the top {len(top)} ops match torch.profiler's External id links")

WARMUP = 2  # the samples' default --warmup: the first step also pays for CUDA and cuBLAS set-up


def steady_share(loads, steps):
    """DataLoader share of the steady steps: each step's load time inside it,
    over the steps that loaded a batch, the warm-up ones left out (the first
    step holds hundreds of ms of set-up that would swamp the ratio)."""
    per_step = []
    for s0, s1 in sorted(steps):
        load = sum(max(0.0, min(e, s1) - max(s, s0)) for s, e in loads)
        if load > 0:
            per_step.append((load, s1 - s0))
    per_step = per_step[WARMUP:]
    total = sum(d for _, d in per_step)
    return (100.0 * sum(l for l, _ in per_step) / total if total else 0.0), len(per_step)


prof_step_spans = [(float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in prof_steps]
prof_loader = [(float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in events
               if "DataLoader" in e.get("name", "") and "__next__" in e["name"]]
prof_share, prof_n = steady_share(prof_loader, prof_step_spans)
gs_step_spans = q("select start, \"end\" from step where source = (select min(source) from step)")
gs_loader = q("select start, \"end\" from range where source = 3")
gs_share, gs_n = steady_share(gs_loader, gs_step_spans)
print(f"steady steps compared: torch.profiler {prof_n}, gpuscope {gs_n}")
print(f"DataLoader ranges: torch.profiler {len(prof_loader)}, gpuscope {len(gs_loader)}")
check(abs(gs_share - prof_share) <= 5.0,
      f"DataLoader share of step time: gpuscope {gs_share:.2f} %, torch.profiler {prof_share:.2f} % (within 5 points)")

sample = {}
for line in open(sample_path):
    if line.startswith("GPUSCOPE_SAMPLE "):
        sample = json.loads(line[len("GPUSCOPE_SAMPLE "):])
want = sample.get("max_memory_allocated")
peak = q("select max(total_allocated) from memory_event where source = 2")[0][0]
if want and peak:
    diff = 100.0 * (peak - want) / want
    check(abs(diff) <= 1.0, f"allocator peak {peak} B vs torch.cuda.max_memory_allocated() {want} B: {diff:+.3f} %")
else:
    check(False, f"allocator peak: recorded {peak}, script printed {want}")
sys.exit(1 if failures else 0)
