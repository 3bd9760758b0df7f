"""scripts/build_wheel.py leaves the build tree as it found it (issue 50, item 14):
`cmake --install` writes install_manifest.txt into the build folder, which the
script removes again, or puts back as it was when a real install left one there.
A planted build of a tiny CMake project that installs bin/gpuscope stands in
for gpuscope's, so this runs in seconds.
Usage: build_wheel_test.py SOURCE_DIR"""
import os
import subprocess
import sys
import tempfile
import zipfile

src = sys.argv[1]
failed = False


def check(ok, what):
    global failed
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    failed = failed or not ok


with tempfile.TemporaryDirectory(prefix="build_wheel_test.") as work:
    project = os.path.join(work, "project")
    build = os.path.join(work, "build")
    os.makedirs(project)
    with open(os.path.join(project, "gpuscope"), "w") as f:
        f.write("#!/bin/sh\necho planted\n")
    with open(os.path.join(project, "CMakeLists.txt"), "w") as f:
        f.write("cmake_minimum_required(VERSION 3.16)\nproject(planted NONE)\n"
                "install(PROGRAMS gpuscope DESTINATION bin)\n")
    subprocess.run(["cmake", "-S", project, "-B", build], check=True, stdout=subprocess.DEVNULL)
    manifest = os.path.join(build, "install_manifest.txt")

    def build_wheel(out):
        return subprocess.run([sys.executable, os.path.join(src, "scripts", "build_wheel.py"), "--build", build,
                               "--out", out], capture_output=True, text=True)

    done = build_wheel(os.path.join(work, "dist"))
    check(done.returncode == 0, "build_wheel.py packs the planted build (exit %d%s)"
          % (done.returncode, "" if done.returncode == 0 else ": " + done.stderr.strip()[-300:]))
    wheel = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if wheel.endswith(".whl") and os.path.exists(wheel):
        names = zipfile.ZipFile(wheel).namelist()
        check("gpuscope/_native/bin/gpuscope" in names, "the wheel holds the installed bin/gpuscope")
    else:
        check(False, "build_wheel.py printed the wheel's path (%r)" % wheel)
    check(not os.path.exists(manifest), "no install_manifest.txt is left in the build folder")

    # A manifest a real `cmake --install` left there is kept, byte for byte.
    with open(manifest, "w") as f:
        f.write("/usr/local/bin/gpuscope")
    done = build_wheel(os.path.join(work, "dist2"))
    with open(manifest) as f:
        kept = f.read()
    check(done.returncode == 0 and kept == "/usr/local/bin/gpuscope",
          "an install_manifest.txt that was there before is put back as it was (%r)" % kept[:60])

sys.exit(1 if failed else 0)
