#!/usr/bin/python3
"""Runs a command with its output on a pseudo-terminal, as a user's terminal
would show it, and prints each line update (\r or \n) with the time it
appeared, then the longest time with nothing new on the terminal: to check that
a progress line (shown only on a terminal) stays until the end.

  /usr/bin/python3 bench/formats/pty_progress.py build/bin/gpuscope import /tmp/kineto_1000mb.json -o /tmp/x.db
"""
import os, pty, sys, time, re, select
t0 = time.monotonic()
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
buf = b""; events = []
while True:
    try:
        r, _, _ = select.select([fd], [], [], 1.0)
        if not r: continue
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data: break
    now = time.monotonic() - t0
    buf += data
    parts = re.split(rb"(\r|\n)", buf)
    buf = parts[-1]
    for p in parts[:-1]:
        if p in (b"\r", b"\n"): continue
        events.append((now, p.decode(errors="replace")))
_, status = os.waitpid(pid, 0)
end = time.monotonic() - t0
if buf: events.append((end, buf.decode(errors="replace")))
last = 0.0; gap = (0.0, 0.0, "")
shown = [e for e in events if e[1].strip() and e[1] != "\x1b[K"]
for t, text in events:
    print("%7.2f s  %r" % (t, text[:150]))
for i in range(1, len(shown)):
    g = shown[i][0] - shown[i - 1][0]
    if g > gap[0]: gap = (g, shown[i - 1][0], shown[i - 1][1][:100])
print("exit %d, %.2f s; longest time without a new line or update: %.2f s after %.2f s (%r)" %
      (os.waitstatus_to_exitcode(status), end, gap[0], gap[1], gap[2]))
