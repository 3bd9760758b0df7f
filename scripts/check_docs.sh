#!/usr/bin/env bash
# The docs stay manuals (issue 42): README.md at most 150 lines and without
# dates (history goes to bench/results/), docs/PERFORMANCE.md at most 200 lines,
# and every relative link in README.md and docs/*.md names a file that exists.
# Usage: scripts/check_docs.sh [ROOT]   (exit 1 and one line per problem)
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
fail=0
problem() { echo "check_docs: $*" >&2; fail=1; }

at_most() {  # FILE LIMIT
  local n
  n=$(wc -l < "$root/$1") || { problem "$1 is missing"; return; }
  [ "$n" -le "$2" ] || problem "$1 has $n lines, more than $2: move details to docs/ and history to bench/results/"
}
at_most README.md 150
at_most docs/PERFORMANCE.md 200

dates=$(grep -c '20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]' "$root/README.md")
[ "$dates" -eq 0 ] || problem "README.md has $dates lines with a date (YYYY-MM-DD): dated figures belong in docs/PERFORMANCE.md or bench/results/"

# Relative Markdown links: [text](path) or [text](path#anchor), not http(s) or mailto.
for doc in "$root"/README.md "$root"/docs/*.md; do
  dir=$(dirname "$doc")
  while IFS= read -r target; do
    path=${target%%#*}
    [ -n "$path" ] || continue
    [ -e "$dir/$path" ] || problem "${doc#"$root"/} links to $target, which does not exist"
  done < <(grep -o '\]([^)]*)' "$doc" | sed 's/^](//; s/)$//' | grep -v -E '^(https?:|mailto:)')
done

[ "$fail" -eq 0 ] && echo "check_docs: ok"
exit "$fail"
