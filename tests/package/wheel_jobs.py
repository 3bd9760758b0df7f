"""The Python side of wheel_test.sh, run by the venv's python with the wheel
installed (Debian's torch, CPU):

  wheel_jobs.py steps N       a loop with no optimizer and no backward pass
                              (inference), gpuscope.step() after each of N
                              iterations: only those calls can give steps
  wheel_jobs.py check_steps DB N
                              the recording of `steps N` holds N-1 steps from
                              ProfilerStep ranges (the last range is never
                              closed), and gpuscope.analyze(DB) analyses them
  wheel_jobs.py job_pythons DIR
                              the Python whose torch `record` builds the plugin
                              for: python, a path, a #! line (torchrun)
  wheel_jobs.py api_errors    gpuscope.analyze of a missing file raises
                              GpuscopeError with the CLI's one line
  wheel_jobs.py no_capture_api DIR
                              with GPUSCOPE_COLLECTOR naming a library without
                              the capture API, profile raises in one line
  wheel_jobs.py notebook DIR  gpuscope.profile twice in one process, around
                              a training loop (two files, the process unharmed)
Each prints ok/FAIL lines; the exit code is 1 when a check failed."""
import os
import sqlite3
import sys
import time

import gpuscope

failed = False


def check(ok, what):
    global failed
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    failed = failed or not ok


def steps(n):
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 8))
    x = torch.randn(32, 64)
    with torch.no_grad():
        for _ in range(n):
            for _ in range(5):
                model(x)
            time.sleep(0.01)  # steps long enough that record's control stretch leaves some traced
            gpuscope.step()


def check_steps(db, n):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT number, source FROM step ORDER BY start").fetchall()
    ranges = con.execute("SELECT count(*) FROM range r JOIN string s ON s.id = r.name_id "
                         "WHERE s.value LIKE 'ProfilerStep#%'").fetchone()[0]
    ops = con.execute("SELECT count(*) FROM op").fetchone()[0]
    con.close()
    check(len(rows) == n - 1, "the recording holds %d steps from gpuscope.step() (%d)" % (n - 1, len(rows)))
    check(all(source == 1 for _, source in rows), "every step comes from a ProfilerStep range (step.source 1)")
    check([r[0] for r in rows] == list(range(n - 1)), "the steps are numbered 0..%d" % (n - 2))
    check(ranges == n - 1, "%d ProfilerStep ranges recorded (%d)" % (n - 1, ranges))
    check(ops > 0, "torch ops recorded (%d)" % ops)
    report = gpuscope.analyze(db)
    summary = report["summary"]
    check(isinstance(report, dict) and "findings" in report, "gpuscope.analyze returns the JSON report as a dict")
    check(summary.get("step_source") == "profiler_step", "analyze's steps are the ProfilerStep ranges (%s)"
          % summary.get("step_source"))
    check(5 <= summary.get("steps", 0) <= n - 1, "analyze analyses %d of them (record's control stretch runs "
          "some untraced)" % summary.get("steps", 0))


def job_pythons(folder):
    """Which Python's torch `record` builds the plugin for, by the job's command."""
    from gpuscope._plugin import job_python

    script = os.path.join(folder, "job_with_shebang.py")
    with open(script, "w") as f:
        f.write("#!%s\nprint(1)\n" % sys.executable)
    env_script = os.path.join(folder, "job_with_env.py")
    with open(env_script, "w") as f:
        f.write("#!/usr/bin/env python3\nprint(1)\n")
    import shutil
    cases = [(["python", "train.py"], shutil.which("python")), ([sys.executable, "x.py"], sys.executable),
             ([script], sys.executable), ([env_script], shutil.which("python3")),
             (["/bin/sh", "-c", "python train.py"], None), (["no-such-program"], None)]
    if os.path.exists("/usr/bin/torchrun"):  # Debian's python3-torch: #!/usr/bin/python3.11
        cases.append((["/usr/bin/torchrun", "train.py"], "/usr/bin/python3.11"))
    for command, want in cases:
        got = job_python(command)
        check(got == want, "record -- %s builds the plugin for %s (%s)" % (" ".join(command), want, got))


def api_errors():
    try:
        gpuscope.analyze("/nonexistent/run.db")
        check(False, "analyze of a missing file raises")
    except gpuscope.GpuscopeError as e:
        text = str(e)
        check("\n" not in text and text.startswith("gpuscope: error: ") and "/nonexistent/run.db" in text,
              "analyze of a missing file raises GpuscopeError with the CLI's line: %s" % text)


def no_capture_api(folder):
    """GPUSCOPE_COLLECTOR names a library without the capture API: profile
    raises GpuscopeError with one line, and nothing is written."""
    import torch

    path = os.path.join(folder, "never.db")
    try:
        with gpuscope.profile(path, steps=5):
            torch.ones(4).sum()
        check(False, "profile without the capture API raises")
    except gpuscope.GpuscopeError as e:
        text = str(e)
        check("\n" not in text and text.startswith("gpuscope: error: profile: ") and "no on-demand capture" in text,
              "profile without the collector's capture API raises GpuscopeError in one line: %s" % text)
    check(not os.path.exists(path), "and writes no file")


def notebook(folder):
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(64, 128), torch.randint(0, 10, (64,))

    def train(n):
        for _ in range(n):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            time.sleep(0.01)  # the control stretch (8 steps, at least 0.2 s) ends well inside the block
        return loss.item()

    train(3)
    files = [os.path.join(folder, "cell1.db"), os.path.join(folder, "cell2.db")]
    op_counts = []
    for i, path in enumerate(files):
        try:
            with gpuscope.profile(path, steps=5):
                train(60)
        except gpuscope.GpuscopeError as e:
            check(False, "profile #%d: %s" % (i + 1, e))
            return
        check(os.path.exists(path), "profile #%d wrote %s" % (i + 1, os.path.basename(path)))
        con = sqlite3.connect(path)
        n = con.execute("SELECT count(*) FROM step").fetchone()[0]
        ops = con.execute("SELECT count(*) FROM op").fetchone()[0]
        con.close()
        check(n >= 5 and ops > 0, "profile #%d recorded steps (%d) and ops (%d)" % (i + 1, n, ops))
        op_counts.append(ops)
        analysed = gpuscope.analyze(path)["summary"].get("steps", 0)
        # steps=5: five traced steps (issue 40), less the warm-up analyze leaves out.
        check(1 <= analysed <= 5, "gpuscope.analyze reads capture #%d: %d steps analysed of the 5 traced"
              % (i + 1, analysed))
    check(len(op_counts) == 2 and op_counts[0] == op_counts[1],
          "both captures hold the same ops, 5 identical steps each (%s)" % op_counts)
    # An existing file is refused in one line; nothing is captured.
    try:
        with gpuscope.profile(files[0], steps=5):
            train(2)
        check(False, "profile into an existing file raises")
    except gpuscope.GpuscopeError as e:
        check("\n" not in str(e) and files[0] in str(e), "profile into an existing file raises in one line: %s" % e)
    # control=False: no control stretch, the 5 steps are the next 5, inside a short block.
    short = os.path.join(folder, "cell3.db")
    with gpuscope.profile(short, steps=5, control=False):
        train(8)
    con = sqlite3.connect(short)
    ops = con.execute("SELECT count(*) FROM op").fetchone()[0]
    con.close()
    check(ops == op_counts[0], "control=False captures 5 steps in a block of 8, with their ops (%d)" % ops)
    # The process goes on unharmed: training still runs and gives a number.
    loss = train(5)
    check(loss == loss, "training goes on after both captures (loss %.4f)" % loss)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "steps":
        steps(int(sys.argv[2]))
    elif mode == "check_steps":
        check_steps(sys.argv[2], int(sys.argv[3]))
    elif mode == "job_pythons":
        job_pythons(sys.argv[2])
    elif mode == "api_errors":
        api_errors()
    elif mode == "no_capture_api":
        no_capture_api(sys.argv[2])
    elif mode == "notebook":
        notebook(sys.argv[2])
    sys.exit(1 if failed else 0)
