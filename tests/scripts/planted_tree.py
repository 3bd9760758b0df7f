"""What the planted-tree tests of scripts/check_*.py share: a tree of files in
a temporary folder, the script run on it, and ok/FAIL lines with the exit status."""
import pathlib
import subprocess
import sys
import tempfile


class Checks:
    def __init__(self, script):
        self.script = script
        self.failed = False

    def check(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        self.failed |= not ok

    def run(self, files):
        """Writes `files` (relative path -> text) into a fresh folder and runs the script on it."""
        root = pathlib.Path(tempfile.mkdtemp(prefix=pathlib.Path(self.script).stem + "_"))
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        return subprocess.run([sys.executable, str(self.script), str(root)], capture_output=True, text=True)

    def exit(self):
        sys.exit(1 if self.failed else 0)
