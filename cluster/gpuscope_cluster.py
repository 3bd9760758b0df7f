#!/usr/bin/python3
"""The Dask driver of `gpuscope cluster` (cluster/cluster.h).

gpuscope runs it as
    gpuscope_cluster.py --gpuscope PATH [--scheduler ADDR] [--workers N]
                        [--steps A-B] [--progress] -- RECORDING...
It submits one Dask task per recording; each task runs
`gpuscope cluster --summarize RECORDING` on a worker and returns its one-line
JSON summary. The summaries go to stdout, one per line, in the order of the
recordings; gpuscope reduces them into the cross-rank report. On failure it
prints one line {"error": "..."} instead and exits 2: gpuscope reports it.

Without --scheduler the tasks run on a dask.distributed.LocalCluster of
--workers processes; with it, on that scheduler's workers, which must see the
recordings under the same paths and have gpuscope at PATH or on their PATH.
"""

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
import warnings

NOT_INSTALLED = "python3-distributed is not installed: apt-get install python3-distributed"


def fail(message):
    print(json.dumps({"error": message}), flush=True)
    sys.exit(2)


def summarize(gpuscope, path, steps):
    """One task: the per-rank pass of one recording, on a worker."""
    exe = gpuscope if os.path.exists(gpuscope) else shutil.which("gpuscope")
    if exe is None:
        return {"error": "%s: gpuscope not found on worker (not at %s, not on PATH)" % (path, gpuscope)}
    cmd = [exe, "cluster", "--summarize", path]
    if steps:
        cmd += ["--steps", steps]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = lines[-1] if lines else "exit %d" % done.returncode
        prefix = "gpuscope: error: "
        return {"error": why[len(prefix):] if why.startswith(prefix) else path + ": " + why}
    return {"summary": done.stdout.decode("utf-8", "replace").strip()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpuscope", required=True)
    ap.add_argument("--scheduler", default="")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--steps", default="")
    ap.add_argument("--progress", action="store_true")
    ap.add_argument("recordings", nargs="+")
    args = ap.parse_args()

    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        fail(NOT_INSTALLED + " (for %s)" % sys.executable)
    # Dask's own log lines and warnings (another process holds the HTTP port
    # 8787: it takes another) would interleave with gpuscope's messages.
    logging.getLogger("distributed").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=UserWarning, module=r"distributed(\.|$)")

    n = len(args.recordings)
    cluster = None
    try:
        if args.scheduler:
            client = Client(args.scheduler)
        else:
            workers = args.workers or max(1, min(n, os.cpu_count() or 1))
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR)
            client = Client(cluster)
    except Exception as e:  # noqa: BLE001 - any failure to reach Dask ends the run in one line
        fail("cannot start Dask (%s): %s" % ("scheduler " + args.scheduler if args.scheduler else "local cluster", e))

    results = [None] * n
    try:
        futures = client.map(summarize, [args.gpuscope] * n, args.recordings, [args.steps] * n, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        done = 0
        for future in as_completed(futures):
            r = future.result()
            if "error" in r:
                fail(r["error"])
            results[index[future.key]] = r["summary"]
            done += 1
            if args.progress:
                sys.stderr.write("\rgpuscope: cluster: %d/%d recordings summarized" % (done, n))
                sys.stderr.flush()
        if args.progress:
            sys.stderr.write("\n")
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    sys.stdout.write("\n".join(results) + "\n")


if __name__ == "__main__":
    main()
