#!/usr/bin/env bash
# The collector without `gpuscope record`: loaded by CUDA through
# CUDA_INJECTION64_PATH (dlopen'ed, so its initial-exec thread-locals must fit
# glibc's static TLS surplus) and through LD_PRELOAD, each on a short torch job.
# Both must run to the end and record kernels and ops; without `record` ops are
# linked to kernels by CUPTI external correlation, so links must be there too.
# Usage (GPU machine, repository root): OUT=dir tests/gpu/injection_check.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gpuscope_injection}
mkdir -p "$OUT"
L=$PWD/.carry/lib/libgpuscope_collector.so
rm -f "$OUT"/{inj,pre}.db*
CUDA_INJECTION64_PATH=$L GPUSCOPE_OUTPUT=$OUT/inj.db timeout 120 python3 samples/torch/train_mlp.py --steps 3 2>&1 | tail -2
echo "CUDA_INJECTION64_PATH: rc=${PIPESTATUS[0]}"
LD_PRELOAD=$L GPUSCOPE_OUTPUT=$OUT/pre.db timeout 120 python3 samples/torch/train_mlp.py --steps 3 2>&1 | tail -2
echo "LD_PRELOAD: rc=${PIPESTATUS[0]}"
python3 - "$OUT" <<'PY'
import sqlite3, sys
bad = 0
for name in ("inj", "pre"):
    try:
        c = sqlite3.connect(f"file:{sys.argv[1]}/{name}.db?mode=ro", uri=True)
        n = {t: c.execute(f"select count(*) from {t}").fetchone()[0] for t in ("kernel", "op", "external_correlation")}
        msgs = [r[0] for r in c.execute("select text from message")][:3]
    except sqlite3.Error as e:
        n, msgs = {}, [str(e)]
    ok = all(n.get(t, 0) > 0 for t in ("kernel", "op", "external_correlation"))
    bad += not ok
    print(("ok  " if ok else "FAIL"), name, n, msgs)
sys.exit(1 if bad else 0)
PY
echo "injection check rc=$?"
