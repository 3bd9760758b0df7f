"""The Python package (python/gpuscope) on bad input and at the edges of a
capture (issue 50, items 5-7), in seconds: the package is staged from the
source tree against this build (bin/gpuscope, the collector, the torch plugin)
rather than built into a wheel (tests/package/wheel_test.sh does that), and
run by the Python with Debian's torch on the CPU.

  gpuscope.analyze('-dash.db') reads that file; analyze('--list-rules') is a
      missing file, never an option
  gpuscope.profile(steps='abc' | 10**12 | -1, seconds=nan) and profile('')
      raise GpuscopeError with the CLI's one line, before anything is loaded
  profile(path, steps=10) on a CPU loop: analyze analyses 10 steps
  a block that raises inside the control stretch: analyze says no step was
      traced (not "every step was traced"), one line on stderr says so
  a block in which no step ends: no file is left, one line says so

Usage: python_api_test.py SOURCE_DIR BUILD_DIR [case...]   (prints ok/FAIL lines)"""
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

SRC, BUILD = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
CASES = sys.argv[3:]
failed = False


def check(ok, what):
    global failed
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    failed = failed or not ok


def stage(root):
    """python/gpuscope with _native/ pointing at this build, as the wheel lays it out."""
    pkg = os.path.join(root, "gpuscope")
    os.makedirs(os.path.join(pkg, "_native", "bin"))
    for name in os.listdir(os.path.join(SRC, "python", "gpuscope")):
        if name.endswith(".py"):
            with open(os.path.join(SRC, "python", "gpuscope", name)) as f:
                text = f.read().replace("@VERSION@", "0.0.0")
            with open(os.path.join(pkg, name), "w") as f:
                f.write(text)
    os.symlink(os.path.join(BUILD, "bin", "gpuscope"), os.path.join(pkg, "_native", "bin", "gpuscope"))


def one_line_error(call, *needles):
    """Runs call(); returns (raised GpuscopeError in one line containing every needle, its text)."""
    import gpuscope
    try:
        call()
    except gpuscope.GpuscopeError as e:
        text = str(e)
        return "\n" not in text and text.startswith("gpuscope: error: ") and all(n in text for n in needles), text
    except BaseException as e:  # noqa: B902 (a raw ValueError, TypeError, ... is the defect)
        return False, "%s: %s" % (type(e).__name__, e)
    return False, "nothing raised"


def analyze_paths(work):
    import gpuscope
    shutil.copy(os.path.join(SRC, "tests", "data", "nvtx_loop.db"), os.path.join(work, "-dash.db"))
    os.chdir(work)
    try:
        report = gpuscope.analyze("-dash.db", what_if=False)
        check(isinstance(report, dict) and "summary" in report, "analyze('-dash.db') reads the file named -dash.db")
    except gpuscope.GpuscopeError as e:
        check(False, "analyze('-dash.db') reads the file named -dash.db: %s" % e)
    ok, text = one_line_error(lambda: gpuscope.analyze("--list-rules"), "--list-rules")
    check(ok and "JSON" not in text and "no such file" in text,
          "analyze('--list-rules') is a missing file, not an option: %s" % text)


def profile_arguments(work):
    import gpuscope
    os.chdir(work)
    path = os.path.join(work, "args.db")

    def profile(*args, **kwargs):
        with gpuscope.profile(*args, **kwargs):
            pass

    for kwargs, needle in (({"steps": "abc"}, "profile: steps: wants a whole number from 0 to 1000000, not 'abc'"),
                           ({"steps": 10 ** 12}, "profile: steps: wants a whole number from 0 to 1000000, not "
                                                 "1000000000000"),
                           ({"steps": -1}, "profile: steps: wants a whole number"),
                           ({"steps": 2.5}, "profile: steps: wants a whole number"),
                           ({"steps": 0, "seconds": float("nan")}, "profile: seconds: wants a number from 0 to 86400"),
                           ({"steps": 0, "seconds": "1"}, "profile: seconds: wants a number")):
        ok, text = one_line_error(lambda: profile(path, **kwargs), needle)
        check(ok, "profile(%s) raises GpuscopeError in the CLI's words: %s"
              % (", ".join("%s=%r" % kv for kv in kwargs.items()), text))
    ok, text = one_line_error(lambda: profile(""), "profile: the recording's path is empty")
    check(ok and "File exists" not in text, "profile('') says the path is empty: %s" % text)
    check(not os.path.exists(path), "and none of them writes a file")


def train_loop():
    import torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(64, 128), torch.randint(0, 10, (64,))

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    return step


def step_rows(path):
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT count(*) FROM step").fetchone()[0], con.execute("SELECT count(*) FROM op").fetchone()[0]
    finally:
        con.close()


def profile_steps(work):
    """profile(path, steps=10) around a longer loop: 10 steps traced, 10 analysed."""
    import time
    import gpuscope
    step = train_loop()
    for _ in range(3):
        step()
    path = os.path.join(work, "ten.db")
    with gpuscope.profile(path, steps=10):
        for _ in range(60):
            step()
            time.sleep(0.01)  # the control stretch (8 steps, at least 0.2 s) ends well inside the block
    summary = gpuscope.analyze(path, what_if=False)["summary"]
    check(summary.get("steps") == 10, "profile(path, steps=10) on a CPU loop: analyze analyses %s steps (10)"
          % summary.get("steps"))


def profile_raises(work):
    """A block that raises at its 6th step, inside the control stretch (8 steps, at least 0.2 s)."""
    import time
    import gpuscope
    step = train_loop()
    path = os.path.join(work, "raised.db")
    try:
        with gpuscope.profile(path, steps=20):
            for i in range(100):
                if i == 5:
                    raise KeyError("stop")
                step()
    except KeyError:
        pass
    check(os.path.exists(path), "the block that raised leaves its recording")
    steps, ops = step_rows(path)
    check(ops == 0, "it holds untraced steps only (%d steps, %d ops)" % (steps, ops))
    ok, text = one_line_error(lambda: gpuscope.analyze(path, what_if=False), "no step was traced")
    check(ok and "every step was traced" not in text, "analyze says no step was traced: %s" % text)


def profile_no_step(work):
    """A block in which no step ends leaves no recording."""
    import gpuscope
    import torch
    path = os.path.join(work, "nostep.db")
    err = os.path.join(work, "nostep.err")
    saved = os.dup(2)
    with open(err, "w") as f:
        os.dup2(f.fileno(), 2)
    try:
        with gpuscope.profile(path, steps=5):
            torch.ones(4).sum()
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
    with open(err) as f:
        said = [line for line in f.read().splitlines() if line.strip()]
    check(not any(os.path.exists(path + s) for s in ("", "-wal", "-shm")),
          "a block in which no step ends leaves no recording")
    check(len(said) == 1 and "no step ended inside the block" in said[0] and path in said[0],
          "and says so in one line: %s" % said)


def main():
    if os.environ.get("GPUSCOPE_API_TEST_CHILD"):
        sys.path.insert(0, os.environ["GPUSCOPE_API_TEST_CHILD"])
        work = tempfile.mkdtemp(prefix="case.", dir=os.environ["GPUSCOPE_API_TEST_CHILD"])
        {"analyze_paths": analyze_paths, "profile_arguments": profile_arguments, "profile_steps": profile_steps,
         "profile_raises": profile_raises, "profile_no_step": profile_no_step}[CASES[0]](work)
        sys.exit(1 if failed else 0)
    cases = CASES or ["analyze_paths", "profile_arguments", "profile_steps", "profile_raises", "profile_no_step"]
    with tempfile.TemporaryDirectory(prefix="python_api_test.") as root:
        stage(root)
        env = dict(os.environ, GPUSCOPE_API_TEST_CHILD=root,
                   GPUSCOPE_COLLECTOR=os.path.join(BUILD, "lib", "libgpuscope_collector.so"),
                   GPUSCOPE_TORCH_PLUGIN=os.path.join(BUILD, "lib", "libgpuscope_torch.so"),
                   GPUSCOPE_CACHE_DIR=os.path.join(root, "cache"))
        rc = 0
        for case in cases:  # one process each: a capture's collector stays loaded in its process
            done = subprocess.run([sys.executable, os.path.abspath(__file__), SRC, BUILD, case], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=150)
            lines = done.stdout.splitlines()
            for line in lines:
                if line.startswith(("ok ", "FAIL ")):
                    print(line, flush=True)
            if done.returncode != 0:
                rc = 1
                print("FAIL case %s (exit %d):" % (case, done.returncode))
                for line in lines[-15:]:
                    if not line.startswith(("ok ", "FAIL ")):
                        print("     " + line)
    sys.exit(rc)


if __name__ == "__main__":
    main()
