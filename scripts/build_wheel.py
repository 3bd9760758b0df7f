#!/usr/bin/env python3
"""Builds the gpuscope wheel from a build tree (standard library only; no pip,
no network):

    scripts/build_wheel.py [--build build] [--out build/dist] [--no-viewer]

`cmake --install BUILD --strip` stages the release layout (cmake/package.cmake:
bin/gpuscope, bin/gpuscope-view, bin/gpuscope_cluster.py,
lib/gpuscope/libgpuscope_collector.so, share/gpuscope/torch-plugin/), which
goes under gpuscope/_native/ beside the Python package python/gpuscope/, so the
binary finds the collector, the viewer and the plugin sources relative to
itself as in the archive. The `gpuscope` console script runs that binary.

The platform tag is what the ELF files need (objdump -T): manylinux_2_X_x86_64
for the oldest policy X whose glibc covers the newest GLIBC_ symbol and whose
libstdc++ the newest GLIBCXX_ symbol (GCC 12's 3.4.30 needs 2_35, Ubuntu
22.04), when gpuscope and the collector link only libraries the policy allows;
otherwise
linux_x86_64, which pip installs from the file but PyPI refuses. The viewer's
Qt libraries are outside every manylinux policy: the viewer is optional, needs
the system's Qt6 and says which library it misses (`gpuscope doctor` too)."""
import argparse
import base64
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# manylinux_2_X: the newest GLIBCXX_ and CXXABI_ of the distribution that
# defines the policy (auditwheel's policy.json: 2_28 GCC 8, 2_31 GCC 9, 2_34/2_35 GCC 11/12).
GLIBCXX_LIMIT = {28: "3.4.25", 31: "3.4.28", 34: "3.4.29", 35: "3.4.30", 36: "3.4.30", 39: "3.4.33"}
ALLOWED_LIBS = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "libgcc_s.so.1",
                "libstdc++.so.6", "ld-linux-x86-64.so.2", "libutil.so.1", "libresolv.so.2", "libGL.so.1",
                "libX11.so.6", "libz.so.1", "libexpat.so.1"}


def vkey(v):
    return tuple(int(x) for x in v.split("."))


def project_version():
    with open(os.path.join(SRC, "CMakeLists.txt")) as f:
        m = re.search(r"project\(gpuscope VERSION ([0-9.]+)", f.read())
    return m.group(1)


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def elf_needs(path):
    """(newest GLIBC_ version, newest GLIBCXX_ version, DT_NEEDED libraries)."""
    dyn = subprocess.run(["objdump", "-T", path], capture_output=True, text=True, check=True).stdout
    glibc = sorted(set(re.findall(r"GLIBC_([0-9.]+)", dyn)), key=vkey)
    glibcxx = sorted(set(re.findall(r"GLIBCXX_([0-9.]+)", dyn)), key=vkey)
    head = subprocess.run(["objdump", "-p", path], capture_output=True, text=True, check=True).stdout
    needed = re.findall(r"^\s*NEEDED\s+(\S+)", head, re.M)
    return (glibc[-1] if glibc else None, glibcxx[-1] if glibcxx else None, needed)


def platform_tag(root):
    """The tag the ELF files under root earn, and one line per file saying why."""
    lines, newest_glibc, newest_cxx, outside = [], "2.17", "3.4", []
    for dirpath, _, files in os.walk(root):
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            if not is_elf(path):
                continue
            glibc, cxx, needed = elf_needs(path)
            rel = os.path.relpath(path, root)
            extra = [n for n in needed if n not in ALLOWED_LIBS]
            optional = os.path.basename(path) == "gpuscope-view"
            lines.append("%s: GLIBC_%s GLIBCXX_%s%s" % (rel, glibc or "none", cxx or "none",
                                                        ("; outside the manylinux policy%s: %s" %
                                                         (" (optional viewer, needs the system's Qt6)" if optional
                                                          else "", " ".join(extra))) if extra else ""))
            if glibc and vkey(glibc) > vkey(newest_glibc):
                newest_glibc = glibc
            if cxx and vkey(cxx) > vkey(newest_cxx):
                newest_cxx = cxx
            if extra and not optional:
                outside.append(rel)
    # The oldest policy whose glibc and libstdc++ both cover what the files need.
    fits = [m for m in sorted(GLIBCXX_LIMIT)
            if m >= vkey(newest_glibc)[1] and vkey(GLIBCXX_LIMIT[m]) >= vkey(newest_cxx)]
    if outside or not fits:
        why = ("%s link libraries outside the policy" % ", ".join(outside) if outside else
               "GLIBCXX_%s is newer than every known manylinux policy allows" % newest_cxx)
        return "linux_x86_64", lines + ["tag linux_x86_64: " + why]
    minor = fits[0]
    return "manylinux_2_%d_x86_64" % minor, lines + [
        "tag manylinux_2_%d_x86_64: the files need GLIBC_%s and GLIBCXX_%s; manylinux_2_%d gives glibc 2.%d and "
        "GLIBCXX_%s" % (minor, newest_glibc, newest_cxx, minor, minor, GLIBCXX_LIMIT[minor])]


def record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def write_wheel(out_dir, version, tag, files):
    """files: (arcname, bytes, executable). Returns the wheel's path."""
    dist = "gpuscope-%s.dist-info" % version
    readme = open(os.path.join(SRC, "docs", "python.md"), encoding="utf-8").read() \
        if os.path.exists(os.path.join(SRC, "docs", "python.md")) else ""
    meta = ("Metadata-Version: 2.1\nName: gpuscope\nVersion: %s\n"
            "Summary: GPU profiler and bottleneck advisor for PyTorch training\n"
            "License: see the project\nRequires-Python: >=3.8\nDescription-Content-Type: text/markdown\n\n%s"
            % (version, readme))
    wheel = "Wheel-Version: 1.0\nGenerator: gpuscope scripts/build_wheel.py\nRoot-Is-Purelib: false\nTag: py3-none-%s\n" % tag
    entry = "[console_scripts]\ngpuscope = gpuscope._cli:main\n"
    files = list(files) + [(dist + "/METADATA", meta.encode(), False), (dist + "/WHEEL", wheel.encode(), False),
                           (dist + "/entry_points.txt", entry.encode(), False)]
    path = os.path.join(out_dir, "gpuscope-%s-py3-none-%s.whl" % (version, tag))
    tmp = path + ".tmp"
    records = []
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data, executable in files:
            info = zipfile.ZipInfo(arcname, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            records.append(record_line(arcname, data))
        records.append(dist + "/RECORD,,")
        info = zipfile.ZipInfo(dist + "/RECORD", date_time=(2026, 1, 1, 0, 0, 0))
        info.external_attr = (0o644 | stat.S_IFREG) << 16
        z.writestr(info, "\n".join(records) + "\n")
    os.replace(tmp, path)
    return path


def install(build, stage):
    """`cmake --install BUILD --prefix STAGE --strip`, which leaves the build tree as it was:
    cmake writes install_manifest.txt into the build folder, so the one there before
    (a real install's) is put back, or the new one removed."""
    manifest = os.path.join(build, "install_manifest.txt")
    before = None
    if os.path.exists(manifest):
        with open(manifest, "rb") as f:
            before = f.read()
    try:
        return subprocess.run(["cmake", "--install", build, "--prefix", stage, "--strip"], capture_output=True,
                              text=True)
    finally:
        if before is None:
            if os.path.exists(manifest):
                os.remove(manifest)
        else:
            with open(manifest, "wb") as f:
                f.write(before)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(SRC, "build"), help="the CMake build tree (built)")
    ap.add_argument("--out", help="where the wheel goes (default BUILD/dist)")
    ap.add_argument("--no-viewer", action="store_true", help="leave gpuscope-view out")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    out = os.path.abspath(a.out or os.path.join(build, "dist"))
    version = project_version()
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gpuscope_wheel.") as tmp:
        stage = os.path.join(tmp, "stage")
        done = install(build, stage)
        if done.returncode != 0:
            sys.exit("build_wheel: cmake --install %s failed (is it built?):\n%s" % (build, done.stdout + done.stderr))
        if not os.path.exists(os.path.join(stage, "bin", "gpuscope")):
            sys.exit("build_wheel: %s installs no bin/gpuscope (build the gpuscope target)" % build)
        shutil.rmtree(os.path.join(stage, "share", "doc"), ignore_errors=True)
        if a.no_viewer and os.path.exists(os.path.join(stage, "bin", "gpuscope-view")):
            os.remove(os.path.join(stage, "bin", "gpuscope-view"))
        tag, lines = platform_tag(stage)
        files = []
        for dirpath, _, names in os.walk(stage):
            for name in sorted(names):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, stage)
                with open(path, "rb") as f:
                    data = f.read()
                files.append(("gpuscope/_native/" + rel, data, os.access(path, os.X_OK)))
        pkg = os.path.join(SRC, "python", "gpuscope")
        for name in sorted(os.listdir(pkg)):
            if name.endswith(".py"):
                with open(os.path.join(pkg, name), encoding="utf-8") as f:
                    text = f.read().replace("@VERSION@", version)
                files.append(("gpuscope/" + name, text.encode(), False))
        files.sort(key=lambda f: f[0])
        path = write_wheel(out, version, tag, files)
    for line in lines:
        print("build_wheel: " + line)
    print(path)


if __name__ == "__main__":
    main()
