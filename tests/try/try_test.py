"""`gpuscope try` on the CPU with Debian's torch (tests/try/, registered in
tests/CMakeLists.txt; docs/try.md). One case per invocation:

  try_test.py CASE --gpuscope BIN --python PY --data DIR

  variants   amp, channels-last, dataloader-stall, compile (not on torch 1.13)
             and a planted failure: each applied exactly as the hook reports,
             the failure reported while the rest are measured, the JSON valid
             against gpuscope-try-1.schema.json, --attach shown by analyze
  rounds     a variant made slow on purpose in its second round (TRY_TEST_SLOW):
             its rounds disagree, so it gets extra rounds alternated with the
             job as it is (up to --max-rounds), the slow round is an outlier,
             and its saving is the median of its rounds, each paired with the
             run as it is of its round
  interrupt  SIGINT to `gpuscope try` mid-run: it prints what was measured,
             exits 130, and no process of the job (nor its DataLoader worker) is left
  refuse     a command that is not a Python program: one line, exit 2
  calibrate  `gpuscope calibrate --device cpu --quick` runs the shipped calibrate.py
             and writes a gpuscope-calibration/1 table (to -o, and without it into the cache)
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "train_cpu.py")


def fail(msg):
    sys.stderr.write("FAIL: %s\n" % msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


# ---------------------------------------------------------------- a small JSON Schema check
# (no jsonschema module on the CI image): type, const, enum, required, properties, items, $ref.
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def is_type(v, t):
    if t == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if t == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    return isinstance(v, TYPES[t])


def validate(v, schema, root, where="$"):
    if "$ref" in schema:
        name = schema["$ref"].split("/")[-1]
        return validate(v, root["$defs"][name], root, where)
    if "const" in schema and v != schema["const"]:
        fail("%s: %r is not %r" % (where, v, schema["const"]))
    if "enum" in schema and v not in schema["enum"]:
        fail("%s: %r not in %r" % (where, v, schema["enum"]))
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(is_type(v, t) for t in types):
            fail("%s: %r is not %s" % (where, v, types))
    if isinstance(v, dict):
        for k in schema.get("required", []):
            check(k in v, "%s: lacks %s" % (where, k))
        for k, sub in schema.get("properties", {}).items():
            if k in v:
                validate(v[k], sub, root, where + "." + k)
    if isinstance(v, list) and "items" in schema:
        for i, item in enumerate(v):
            validate(item, schema["items"], root, "%s[%d]" % (where, i))


def env_for(tmp, **extra):
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
    env.pop("GPUSCOPE_CACHE_DIR", None)
    env.update(extra)
    return env


# ---------------------------------------------------------------- cases
def case_variants(a, tmp):
    rec = os.path.join(tmp, "amp.db")
    shutil.copy(os.path.join(a.data, "advisor_amp.db"), rec)
    out = os.path.join(tmp, "try.json")
    fails = "amp+channels-last"
    cmd = [a.gpuscope, "try", "--fixes", "amp,channels-last,dataloader-stall,compile," + fails,
           "--steps", "6", "--rounds", "2", "--max-rounds", "2", "--warmup-max", "12", "--grace", "5", "--format", "json", "-o", out,
           "--attach", rec, "--", a.python, TRAIN]
    done = subprocess.run(cmd, env=env_for(tmp, TRY_TEST_FAIL=fails), capture_output=True, text=True, timeout=900)
    sys.stderr.write(done.stderr)
    check(done.returncode == 0, "try exited %d" % done.returncode)
    check("runs 6 x 2 = 12 times" in done.stderr, "the run count is said before it starts")
    doc = json.load(open(out))
    validate(doc, json.load(open(os.path.join(HERE, "gpuscope-try-1.schema.json"))),
             json.load(open(os.path.join(HERE, "gpuscope-try-1.schema.json"))))
    check(doc["baseline"]["state"] == "measured", "the baseline measured: %r" % doc["baseline"])
    check(doc["baseline"]["applied"] == [], "the baseline changes nothing")
    by = {v["variant"]: v for v in doc["variants"]}
    check(set(by) == {"amp", "channels-last", "dataloader-stall", "compile", fails}, "variants: %s" % sorted(by))
    expect = {
        "amp": ["amp: autocast bfloat16 around Net.forward (cpu), 1 module"],
        "channels-last": ["channels-last: Net and the 4-D inputs of its calls, 1 module"],
    }
    for name, applied in expect.items():
        v = by[name]
        check(v["state"] == "measured", "%s measured: %r" % (name, v))
        check(v["applied"] == applied, "%s applied %r" % (name, v["applied"]))
        check(all(r["end"] == "measured" and r["steady_steps"] == 6 for r in v["runs"]), "%s: 2 runs of 6 steps" % name)
        check(isinstance(v["saving_pct"], (int, float)), "%s has a saving" % name)
    dl = by["dataloader-stall"]
    check(dl["state"] == "measured", "dataloader-stall measured: %r" % dl)
    check(len(dl["applied"]) == 1 and dl["applied"][0].startswith("dataloader-stall: DataLoader(num_workers 0->")
          and "persistent_workers" in dl["applied"][0] and dl["applied"][0].endswith(", 1 loader"),
          "dataloader-stall applied %r" % dl["applied"])
    bad = by[fails]
    check(bad["state"] == "failed", "the planted failure is failed: %r" % bad)
    check("out of memory (planted" in (bad["why"] or "") and bad["why"].startswith("exit code 1: RuntimeError"),
          "its one-line reason: %r" % bad["why"])
    check([r["end"] for r in bad["runs"]] == ["failed", "not-run"], "a failed variant is not run again")
    comp = by["compile"]
    check(comp["state"] == "not-applied" and "not available on torch" in comp["why"], "compile: %r" % comp)
    check(doc["max_rounds"] == 2 and all(v["extra_rounds"] == 0 and v["extra_rounds_why"] is None
                                         for v in doc["variants"] + [doc["baseline"]]), "--max-rounds 2: no extra round")
    # The baseline ran in both rounds, alternated with the variants.
    check([r["end"] for r in doc["baseline"]["runs"]] == ["measured", "measured"], "baseline rounds")
    # History: one line per measured variant.
    hist = os.path.join(tmp, "cache", "gpuscope", "try_history.jsonl")
    lines = [json.loads(l) for l in open(hist)]
    check(sorted(l["fix"] for l in lines) == ["amp", "channels-last", "dataloader-stall"], "history %r" % lines)
    check(all(l["torch"].startswith("1.13") for l in lines), "history names torch")
    check(all(l["rounds"] == 2 and l["outlier_rounds"] == [] for l in lines), "history gives the rounds: %r" % lines)
    # --attach: analyze shows measured beside predicted.
    text = subprocess.run([a.gpuscope, "analyze", rec], capture_output=True, text=True, timeout=300)
    check(text.returncode == 0, "analyze: %s" % text.stderr)
    check("Tried (gpuscope try" in text.stdout, "analyze's text has the tried section:\n" + text.stdout[-2000:])
    amp_line = [l for l in text.stdout.splitlines() if l.strip().startswith("amp: measured")]
    check(len(amp_line) == 1 and "predicted" in amp_line[0], "amp measured and predicted: %r" % amp_line)
    rep = json.loads(subprocess.run([a.gpuscope, "analyze", rec, "--format", "json"], capture_output=True, text=True,
                                    timeout=300).stdout)
    tried = {t["variant"]: t for t in rep["tried"]}
    check(set(tried) == set(by), "analyze JSON tried: %s" % sorted(tried))
    check(tried["amp"]["measured_saving_pct"] == by["amp"]["saving_pct"], "the same measurement")
    check(tried["amp"]["predicted_saving_pct"] is not None, "amp predicted by the replay of advisor_amp.db")
    check(tried["amp"]["within_range"] in (True, False), "within_range judged")
    check(tried[fails]["state"] == "failed", "the failure shown")
    md = subprocess.run([a.gpuscope, "analyze", rec, "--format", "md"], capture_output=True, text=True, timeout=300)
    check("## Tried (measured by gpuscope try)" in md.stdout and "amp: measured" in md.stdout, "analyze's Markdown")
    html = subprocess.run([a.gpuscope, "analyze", rec, "--format", "html"], capture_output=True, text=True, timeout=300)
    check(html.returncode == 0 and "<h2>Tried</h2>" in html.stdout and "<td class=\"name\"><code>amp</code></td>" in html.stdout
          and "failed: exit code 1: RuntimeError: out of memory (planted" in html.stdout, "analyze's HTML has the tried table")
    print("variants: ok")


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def case_rounds(a, tmp):
    out = os.path.join(tmp, "try.json")
    counter = os.path.join(tmp, "slow-runs")
    # 200 ms more per step in channels-last's second run: on a loop of 5-30 ms
    # steps, a round that costs 500 % or more, far beyond the CPU's own noise.
    env = env_for(tmp, TRY_TEST_SLOW="channels-last:2:" + counter, TRY_TEST_SLOW_MS="200")
    cmd = [a.gpuscope, "try", "--fixes", "channels-last", "--steps", "6", "--rounds", "3", "--max-rounds", "5",
           "--warmup-max", "12", "--grace", "5", "--format", "json", "-o", out, "--", a.python, TRAIN]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    sys.stderr.write(done.stderr)
    check(done.returncode == 0, "try exited %d" % done.returncode)
    check("up to 5 rounds" in done.stderr, "the extra rounds are announced before it starts")
    doc = json.load(open(out))
    schema = json.load(open(os.path.join(HERE, "gpuscope-try-1.schema.json")))
    validate(doc, schema, schema)
    check(doc["rounds"] == 3 and doc["max_rounds"] == 5, "rounds %r, max %r" % (doc["rounds"], doc["max_rounds"]))
    v = doc["variants"][0]
    base = doc["baseline"]
    check(v["state"] == "measured", "channels-last measured: %r" % v)
    check(v["extra_rounds"] >= 1 and v["extra_rounds_why"], "extra rounds ran, and why: %r" % v["extra_rounds_why"])
    check("round 2 (" in v["extra_rounds_why"] and "far off" in v["extra_rounds_why"],
          "the slow round named as far off: %r" % v["extra_rounds_why"])
    check("channels-last: " + v["extra_rounds_why"] in done.stderr, "said while it runs")
    check(2 in v["outlier_rounds"], "round 2 an outlier: %r" % v["outlier_rounds"])
    n = 3 + v["extra_rounds"]
    check([r["round"] for r in v["runs"]] == list(range(1, n + 1)), "the variant's runs: rounds 1..%d" % n)
    check(base["extra_rounds"] == v["extra_rounds"] and [r["round"] for r in base["runs"]] == list(range(1, n + 1)),
          "the job as it is ran in the extra rounds too: %d of %d" % (base["extra_rounds"], v["extra_rounds"]))
    check(base["extra_rounds_why"] is not None, "the baseline's extra rounds say why")
    check(doc["runs_planned"] == 2 * n and doc["runs_done"] == 2 * n, "runs %d/%d of %d" %
          (doc["runs_done"], doc["runs_planned"], 2 * n))
    # The saving: the median of the rounds' savings, each round against the run as it is of its round.
    savings = [100 * (1 - median(r["steady_ms"]) / median(b["steady_ms"])) for r, b in zip(v["runs"], base["runs"])]
    check(abs(v["saving_pct"] - median(savings)) < 0.05, "saving %r, the rounds' median %r" % (v["saving_pct"], savings))
    check(savings[1] < -200 and v["saving_pct"] > -100, "the slow round (%r) does not drag the saving (%r)"
          % (savings[1], v["saving_pct"]))
    # The JSON's step times are rounded to 1 us: a round 10x slower than its baseline carries
    # that rounding into its saving 10x over.
    k = savings.index(min(savings))
    vb, bb = median(v["runs"][k]["steady_ms"]), median(base["runs"][k]["steady_ms"])
    tolerance = 0.05 + 100 * 0.0005 * (1 / bb + vb / bb ** 2)
    check(abs(v["saving_range_pct"][0] - min(savings)) < tolerance, "the range still shows the slow round: %r, savings %r, "
          "steady %r against %r" % (v["saving_range_pct"], savings, [r["steady_ms"] for r in v["runs"]],
                                    [b["steady_ms"] for b in base["runs"]]))
    print("rounds: ok (%d extra rounds; savings %s; saving %+.1f %%)" %
          (v["extra_rounds"], ", ".join("%+.1f" % x for x in savings), v["saving_pct"]))


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def case_interrupt(a, tmp):
    pids = os.path.join(tmp, "pids")
    env = env_for(tmp, TRY_TEST_PIDS=pids, TRY_TEST_WORKERS="1")
    cmd = [a.gpuscope, "try", "--fixes", "amp", "--steps", "100000", "--rounds", "2", "--grace", "5", "--", a.python,
           TRAIN]
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = set()
    deadline = time.time() + 180
    while time.time() < deadline and len(seen) < 2:  # the job and its DataLoader worker
        time.sleep(0.5)
        if os.path.exists(pids):
            seen = {int(l) for l in open(pids) if l.strip()}
        if p.poll() is not None:
            fail("try ended early: %s" % p.stderr.read())
    check(len(seen) >= 2, "the job and its worker started: %s" % seen)
    time.sleep(2)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    sys.stderr.write(err)
    check(p.returncode == 130, "exit code %d after SIGINT" % p.returncode)
    check("interrupted" in out, "says it was interrupted:\n" + out)
    check("as it is" in out, "prints the table of what was measured:\n" + out)
    time.sleep(1)
    seen = {int(l) for l in open(pids) if l.strip()}
    left = [pid for pid in seen if alive(pid)]
    check(not left, "processes left after Ctrl-C: %s" % left)
    print("interrupt: ok (%d processes of the job, none left)" % len(seen))


def case_refuse(a, tmp):
    done = subprocess.run([a.gpuscope, "try", "--", "/bin/sh", "-c", "true"], capture_output=True, text=True,
                          env=env_for(tmp), timeout=60)
    check(done.returncode == 2, "exit %d" % done.returncode)
    lines = [l for l in done.stderr.splitlines() if l.strip()]
    check(len(lines) == 1 and "is not a Python program" in lines[0], "one line: %r" % lines)
    done = subprocess.run([a.gpuscope, "try", "--fixes", "amp,warp-speed", "--", a.python, TRAIN],
                          capture_output=True, text=True, env=env_for(tmp), timeout=60)
    check(done.returncode == 2 and "unknown fix 'warp-speed'" in done.stderr, "unknown fix: %r" % done.stderr)
    done = subprocess.run([a.gpuscope, "try", "--fixes", "host-sync", "--", a.python, TRAIN],
                          capture_output=True, text=True, env=env_for(tmp), timeout=60)
    check(done.returncode == 2 and "needs a code change" in done.stderr, "host-sync: %r" % done.stderr)
    print("refuse: ok")


def case_calibrate(a, tmp):
    out = os.path.join(tmp, "cal.json")
    done = subprocess.run([a.gpuscope, "calibrate", "--device", "cpu", "--quick", "--seconds", "30", "--python",
                           a.python, "-o", out], capture_output=True, text=True, env=env_for(tmp), timeout=300)
    check(done.returncode == 0, "calibrate exited %d: %s" % (done.returncode, done.stderr[-2000:]))
    doc = json.load(open(out))
    check(doc["schema"] == "gpuscope-calibration/1", "schema %r" % doc.get("schema"))
    check("wrote " + out in done.stderr, "says where it wrote")
    again = subprocess.run([a.gpuscope, "calibrate", "--device", "cpu", "-o", out], capture_output=True, text=True,
                           env=env_for(tmp), timeout=60)
    check(again.returncode == 2 and "already exists" in again.stderr, "an existing output is refused")
    # Without -o: into the cache, named after the device it measured, where analyze looks.
    into = subprocess.run([a.gpuscope, "calibrate", "--device", "cpu", "--quick", "--seconds", "30", "--python",
                           a.python], capture_output=True, text=True, env=env_for(tmp), timeout=300)
    check(into.returncode == 0, "calibrate into the cache exited %d: %s" % (into.returncode, into.stderr[-2000:]))
    folder = os.path.join(tmp, "cache", "gpuscope", "calibration")
    tables = sorted(os.listdir(folder))
    check(len(tables) == 1 and tables[0].startswith("cpu-") and tables[0].endswith(".json"), "cache tables %r" % tables)
    cached = json.load(open(os.path.join(folder, tables[0])))
    check(cached["schema"] == "gpuscope-calibration/1" and cached["device"].startswith("cpu"), "cached %r" % cached.get("device"))
    check("wrote " + os.path.join(folder, tables[0]) in into.stderr, "says where it wrote: %s" % into.stderr[-500:])
    print("calibrate: ok")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=["variants", "rounds", "interrupt", "refuse", "calibrate"])
    ap.add_argument("--gpuscope", required=True)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--data", default=os.path.join(HERE, "..", "data"))
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="gpuscope-try-test-")
    try:
        cases = {"variants": case_variants, "rounds": case_rounds, "interrupt": case_interrupt, "refuse": case_refuse,
                 "calibrate": case_calibrate}
        cases[a.case](a, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
