#!/usr/bin/env bash
# scripts/check_docs.sh on planted offenders: each must fail it, the clean tree must pass.
set -uo pipefail
check=${1:?usage: check_docs_test.sh REPO_ROOT}/scripts/check_docs.sh
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
status=0
make_root() {  # a minimal tree that passes
  rm -rf "$tmp/r"; mkdir -p "$tmp/r/docs"
  printf '# x\n\nSee [the manual](docs/a.md).\n' > "$tmp/r/README.md"
  printf '# a\n[perf](PERFORMANCE.md)\n' > "$tmp/r/docs/a.md"
  printf '# perf\n' > "$tmp/r/docs/PERFORMANCE.md"
}
expect() {  # WANT(pass|fail) NAME
  if "$check" "$tmp/r" > "$tmp/out" 2>&1; then got=pass; else got=fail; fi
  if [ "$got" = "$1" ]; then echo "ok: $2"; else echo "FAILED: $2 (wanted $1, got $got)"; cat "$tmp/out"; status=1; fi
}
make_root; expect pass "a clean tree"
make_root; seq 151 >> "$tmp/r/README.md"; expect fail "README over 150 lines"
make_root; echo "Measured on 2026-12-05." >> "$tmp/r/README.md"; expect fail "a date in README"
make_root; seq 201 >> "$tmp/r/docs/PERFORMANCE.md"; expect fail "PERFORMANCE.md over 200 lines"
make_root; echo "[gone](docs/missing.md)" >> "$tmp/r/README.md"; expect fail "a broken link in README"
make_root; echo "[gone](../nowhere/x.md#y)" >> "$tmp/r/docs/a.md"; expect fail "a broken link in docs/"
make_root; echo "[web](https://example.com/x) [anchor](#top)" >> "$tmp/r/docs/a.md"; expect pass "web links and anchors"
exit $status
