"""What the planted-tree tests of scripts/check_*.py share: a tree of files in
a temporary folder, the script run on it, and ok/FAIL lines with the exit status."""
import pathlib
import shutil
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
        """Writes `files` (relative path -> text) into a fresh folder, runs the
        script on it and removes the folder."""
        root = pathlib.Path(tempfile.mkdtemp(prefix=pathlib.Path(self.script).stem + "_"))
        try:
            for name, text in files.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text)
            return subprocess.run([sys.executable, str(self.script), str(root)], capture_output=True, text=True)
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def exit(self):
        sys.exit(1 if self.failed else 0)
