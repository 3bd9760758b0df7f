# Sourced by package_test.sh and wheel_test.sh: a scratch folder $WORK removed
# at exit, and check, which runs a command and prints one ok/FAIL line (the
# log's last lines under a FAIL), setting failed=1 on a failure.
# Usage: . check_lib.sh NAME   (the folder is /tmp/NAME.XXXXXX)
WORK=$(mktemp -d "/tmp/$1.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
failed=0
check() {  # check "what" command...
  local what=$1
  shift
  if "$@" > "$WORK/last.log" 2>&1; then
    echo "ok   $what"
  else
    echo "FAIL $what"
    tail -15 "$WORK/last.log" | sed 's/^/     /'
    failed=1
  fi
}
