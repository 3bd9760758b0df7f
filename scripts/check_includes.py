#!/usr/bin/env python3
"""Two rules for #include "..." (issue 42).

1. One include root: every quoted include is spelled from the repository root
   ("trace_formats/store/reader.h", not "store/reader.h" or "reader.h"), so the
   path says where the file lives. Exempt: generated files (*.pb.h, *.moc),
   trace_formats/store/records.h (written from the schema), the plugin API header "gpuscope/plugin.h" (plugins/include/, the path a
   plugin author writes), and plugins/ and python/, which build stand-alone
   against an installed gpuscope.
2. No include inside a folder points back up to its entry point.

A folder's entry point is the header that its outermost layer declares (for the
collector: collector/collector.h, the one init every injection path reaches).
Only the files of that outer layer may include it; the layer below (the
collector's gs_collector_core library, which tests drive with fake CUPTI)
reaches process-wide state through headers of its own level. The outer layer
is read from the folder's CMakeLists.txt: the sources of the named target.

    scripts/check_includes.py [REPO]     exit 1 and one line per offending include
"""
import pathlib
import re
import sys

# folder -> (entry header, the CMake target whose sources are the outer layer)
ENTRY_POINTS = {
    "collector": ("collector/collector.h", "gpuscope_collector"),
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

SOURCE_SUFFIXES = (".h", ".cpp", ".cc")
STANDALONE = ("plugins", "python", "build")
GENERATED = (".pb.h", ".moc")
GENERATED_FILES = {"trace_formats/store/records.h"}  # trace_formats/schema/records_gen.cpp writes it
PLUGIN_API = "plugins/include"


def include_root_problems(repo):
    """Quoted includes not spelled from the repository root."""
    problems = []
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo)
        if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
            continue
        if rel.parts[0] in STANDALONE or rel.parts[0].startswith(".") or rel.parts[0].startswith("build"):
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            name = m.group(1)
            if name.endswith(GENERATED) or name in GENERATED_FILES or (repo / name).is_file() or (repo / PLUGIN_API / name).is_file():
                continue
            problems.append(f"{rel}:{n}: #include \"{name}\" is not a path from the repository root")
    return problems


def target_sources(cmake_text, target):
    """The .cpp files named in add_library(TARGET ...)."""
    m = re.search(r"add_library\(\s*" + re.escape(target) + r"\b([^)]*)\)", cmake_text)
    if not m:
        return None
    return {w for w in m.group(1).split() if w.endswith(".cpp")}


def main():
    repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    problems = include_root_problems(repo)
    for folder, (entry, target) in ENTRY_POINTS.items():
        cmake = repo / folder / "CMakeLists.txt"
        outer = target_sources(cmake.read_text(), target)
        if outer is None:
            problems.append(f"{cmake}: no add_library({target} ...) to read the outer layer from")
            continue
        entry_source = pathlib.Path(entry).with_suffix(".cpp").name
        for path in sorted((repo / folder).rglob("*")):
            if path.suffix not in (".h", ".cpp") or path.name in outer or path.name == entry_source:
                continue
            if path.relative_to(repo).as_posix() == entry:
                continue
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if m and m.group(1) == entry:
                    problems.append(f"{path.relative_to(repo)}:{n}: includes its folder's entry point {entry}; "
                                    f"only the sources of {target} may (move what it needs to a lower header)")
    for p in problems:
        print(p)
    if not problems:
        print("check_includes: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
