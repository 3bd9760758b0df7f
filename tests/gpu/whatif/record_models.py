"""Records the plain variant of each model with gpuscope, as a user would:
  GPUSCOPE record --force -o OUTDIR/<model>_<i>.db -- python3 tests/gpu/whatif/run_plain.py --model <model> --steps 40
then compresses the recording (zstd -q --rm, else gzip). The job's stdout and
stderr go to OUTDIR/<model>_<i>.out and .err. One line per recording on stdout
and one JSON line in OUTDIR/recordings.jsonl:
  {"model", "i", "rc", "seconds", "db", "bytes", "run_plain": <its RUN_PLAIN line>}
--no-record runs run_plain.py alone (the same line, no db): checks that it works.

Usage: python3 tests/gpu/whatif/record_models.py --models resnet50,bert --gpuscope .carry/bin/gpuscope --outdir r/rec
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def say(*a):
    print("[%s]" % time.strftime("%H:%M:%S"), *a, flush=True)


def compress(path):
    """The recording compressed beside it (zstd if present, else gzip); returns the new path."""
    if shutil.which("zstd"):
        rc = subprocess.call(["zstd", "-q", "--rm", "-f", path])
        return path + ".zst" if rc == 0 else path
    rc = subprocess.call(["gzip", "-f", path])
    return path + ".gz" if rc == 0 else path


def kill_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def run_plain_line(out_path):
    try:
        with open(out_path, errors="replace") as f:
            for line in f:
                if line.startswith("RUN_PLAIN "):
                    return json.loads(line[len("RUN_PLAIN "):])
    except (OSError, ValueError):
        pass
    return None


def main():
    import models  # only for the names: torch imports here too, but not CUDA

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", required=True, help="comma list, or all")
    p.add_argument("--recordings", type=int, default=1, help="recordings per model")
    p.add_argument("--gpuscope", default=".carry/bin/gpuscope")
    p.add_argument("--outdir", required=True)
    p.add_argument("--python", default="python3", help="the interpreter the recorded job runs")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per recording")
    p.add_argument("--deadline", type=float, default=0.0,
                   help="epoch seconds: no recording starts with less than 20 s left; each ends by it")
    p.add_argument("--record-args", default="", help="extra arguments to `gpuscope record` (space separated)")
    p.add_argument("--max-total-mb", type=float, default=0.0,
                   help="compressed recordings kept in all; later ones are deleted (0: no cap)")
    p.add_argument("--no-record", action="store_true", help="run run_plain.py without gpuscope")
    p.add_argument("--device", default="cuda")
    p.add_argument("--tiny", action="store_true")
    args = p.parse_args()
    names = list(models.MODELS) if args.models == "all" else [m for m in args.models.replace(" ", ",").split(",") if m]
    unknown = [m for m in names if m not in models.MODELS]
    if unknown:
        p.error("unknown models: %s" % ", ".join(unknown))
    os.makedirs(args.outdir, exist_ok=True)
    summary = open(os.path.join(args.outdir, "recordings.jsonl"), "a")
    job = [args.python, os.path.join(HERE, "run_plain.py"), "--steps", str(args.steps), "--device", args.device]
    if args.tiny:
        job.append("--tiny")
    total = 0
    for i in range(args.recordings):
        for name in names:
            limit = args.timeout
            if args.deadline:
                left = args.deadline - time.time()
                if left < 20:
                    say("%s_%d SKIPPED: %.0fs left" % (name, i, left))
                    continue
                limit = min(limit, left)
            base = os.path.join(args.outdir, "%s_%d" % (name, i))
            db = base + ".db"
            cmd = job + ["--model", name]
            if not args.no_record:
                cmd = [args.gpuscope, "record", "--force"] + args.record_args.split() + ["-o", db, "--"] + cmd
            t0 = time.time()
            with open(base + ".out", "w") as out, open(base + ".err", "w") as err:
                try:
                    # Its own session, so that a timeout ends the job's DataLoader workers too.
                    proc = subprocess.Popen(cmd, stdout=out, stderr=err, start_new_session=True)
                    try:
                        rc = proc.wait(timeout=limit)
                    except subprocess.TimeoutExpired:
                        kill_group(proc, 15)
                        try:
                            proc.wait(timeout=10)
                        except subprocess.TimeoutExpired:
                            kill_group(proc, 9)
                            proc.wait()
                        rc = "timeout"
                except OSError as e:
                    rc = repr(e)
            seconds = time.time() - t0
            size, kept = None, None
            if not args.no_record and os.path.exists(db):
                size = os.path.getsize(db)
                kept = compress(db)
                kept_bytes = os.path.getsize(kept)
                if args.max_total_mb and total + kept_bytes > args.max_total_mb * 1e6:
                    # What comes back from the device is capped (64 MiB in all): drop, keep the logs.
                    os.remove(kept)
                    kept = "dropped (over --max-total-mb)"
                else:
                    total += kept_bytes
            line = run_plain_line(base + ".out")
            row = dict(model=name, i=i, rc=rc, seconds=round(seconds, 1), db=kept and os.path.basename(kept),
                       compressed_bytes=kept and os.path.exists(kept) and os.path.getsize(kept) or None,
                       bytes=size, run_plain=line)
            summary.write(json.dumps(row) + "\n")
            summary.flush()
            say("%s_%d rc=%s %.1fs db=%s %s step_ms=%s" % (
                name, i, rc, seconds, kept and os.path.basename(kept),
                "%.1f MB" % (size / 1e6) if size else "-", line and line.get("step_ms")))
            if rc != 0:
                try:
                    with open(base + ".err", errors="replace") as f:
                        tail = f.read()[-600:]
                    print("    stderr tail: " + tail.replace("\n", "\n    "), flush=True)
                except OSError:
                    pass


if __name__ == "__main__":
    main()
