# Sourced by the GPU scripts. show_hang ROOT_PID [gdb]: prints each process
# below ROOT_PID (two levels) with its threads' states and wait channels and,
# with "gdb", their stacks from cuda-gdb — the main thread first, since a
# long thread list gets cut. Then the caller kills the tree.
show_hang() {
  local root=$1 with_gdb=${2:-}
  local q t
  for q in $(pgrep -P "$root") $(for c in $(pgrep -P "$root"); do pgrep -P "$c"; done); do
    echo "--- pid $q: $(tr '\0' ' ' < /proc/$q/cmdline | head -c 150)"
    for t in /proc/$q/task/*; do echo "  task ${t##*/} $(cat $t/comm) $(cut -d' ' -f3 $t/stat) wchan=$(cat $t/wchan 2>/dev/null)"; done
    [ -n "$with_gdb" ] && timeout 100 cuda-gdb -batch -p "$q" -ex 'thread apply 1 bt 30' -ex 'thread apply all bt 15' 2>&1 |
      grep -E '^#|^Thread' | head -200
  done
}
