#!/usr/bin/env python3
"""Golden test: `gpuscope info` on each real recording in tests/data/ that has
an expected file tests/collector/golden/<name>.info. On a mismatch writes
<expected>.actual and prints a unified diff."""
import difflib
import os
import subprocess
import sys

gs, src = sys.argv[1], sys.argv[2]
golden_dir = os.path.join(src, "tests", "collector", "golden")
failures = 0
for name in sorted(os.listdir(golden_dir)):
    if not name.endswith(".info"):
        continue
    db = os.path.join("tests", "data", name[:-5] + ".db")
    r = subprocess.run([gs, "info", db], cwd=src, capture_output=True, text=True)
    expected_path = os.path.join(golden_dir, name)
    expected = open(expected_path).read()
    if r.returncode != 0 or r.stdout != expected:
        failures += 1
        open(expected_path + ".actual", "w").write(r.stdout)
        sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), r.stdout.splitlines(True),
                                                   expected_path, expected_path + ".actual"))
        print(f"FAIL {db} (rc {r.returncode}) {r.stderr}")
    else:
        print(f"ok   {db}")
sys.exit(1 if failures else 0)
