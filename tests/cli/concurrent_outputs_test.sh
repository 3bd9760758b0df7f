#!/usr/bin/env bash
# Outputs are claimed atomically (issue 39, item 3): commands started together
# on one output name without --force, 20 rounds each of import against import,
# export against export and import against export; exactly one wins every
# round, the others fail in one line saying the name exists, and no temporary
# file is left behind.
# Usage: concurrent_outputs_test.sh GPUSCOPE TRACE.json RECORDING.db
set -u
gpuscope=$1 trace=$2 recording=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuscope_concurrent.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0

# race NAME OUTPUT CMD1 CMD2 [CMD3]: starts the commands together, each with its
# own log, and checks the round.
race() {
  local name=$1 out=$2
  shift 2
  rm -f "$work"/out* "$work"/.out* "$work"/log.*
  local pids=() i=0
  for cmd in "$@"; do
    bash -c "$cmd" >"$work/log.$i" 2>&1 &
    pids+=($!)
    i=$((i + 1))
  done
  local won=0 lost=0 bad=0
  for i in "${!pids[@]}"; do
    if wait "${pids[$i]}"; then
      won=$((won + 1))
    elif [ "$(wc -l <"$work/log.$i")" -le 2 ] && grep -q "already exists; use --force to overwrite" "$work/log.$i"; then
      lost=$((lost + 1))
    else
      bad=$((bad + 1))
      echo "$name: command $i failed otherwise:" && cat "$work/log.$i"
    fi
  done
  local leftovers
  leftovers=$(cd "$work" && ls -A | grep -v '^log\.' | grep -vx "$(basename "$out")")
  if [ "$won" -ne 1 ] || [ "$bad" -ne 0 ] || [ ! -s "$out" ] || [ -n "$leftovers" ]; then
    echo "FAIL $name: $won succeeded, $lost refused, $bad failed otherwise; left: ${leftovers:-nothing else}"
    failures=$((failures + 1))
  fi
}

for round in $(seq 1 20); do
  import="'$gpuscope' import '$trace' -o '$work/out.db'"
  race "import/import round $round" "$work/out.db" "$import" "$import" "$import"
  export="'$gpuscope' export '$recording' -q --chrome '$work/out.json'"
  race "export/export round $round" "$work/out.json" "$export" "$export" "$export"
  race "import/export round $round" "$work/out.db" "$import" "'$gpuscope' export '$recording' -q --chrome '$work/out.db'"
done

if [ "$failures" -ne 0 ]; then
  echo "$failures of 60 rounds did not end with exactly one output written"
  exit 1
fi
echo "60 rounds: exactly one writer won each"
