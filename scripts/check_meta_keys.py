#!/usr/bin/env python3
"""No meta key spelled as a string literal outside the meta key table (issue 42).

The keys of the recording's `meta` table are declared once, in
trace_formats/schema/meta_keys.h (meta_key::kOriginNs = "origin_ns"). A line of
C++ outside that file and outside tests/ that reads or writes meta (it says
`meta`) and spells a declared key in quotes ("origin_ns" or, inside SQL,
'origin_ns') is reported: it should name meta_key::kOriginNs.

    scripts/check_meta_keys.py [REPO]     exit 1 and one line per offending line
"""
import pathlib
import re
import sys

TABLE = "trace_formats/schema/meta_keys.h"
DECLARED = re.compile(r'inline constexpr std::string_view (k\w+) = "([^"]+)";')
SKIP = ("tests", "build", "python")


def main():
    repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    table = repo / TABLE
    if not table.is_file():
        print(f"{TABLE}: missing, no meta keys to check against")
        return 1
    keys = {value: name for name, value in DECLARED.findall(table.read_text())}
    if not keys:
        print(f"{TABLE}: no keys declared")
        return 1
    spelled = re.compile(r"""["']((?:%s))["']""" % "|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True)))
    problems = []
    for path in sorted(repo.rglob("*")):
        if path.suffix not in (".h", ".cpp", ".cc") or not path.is_file():
            continue
        rel = path.relative_to(repo)
        if rel.as_posix() == TABLE or rel.parts[0] in SKIP or rel.parts[0].startswith((".", "build")):
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if "meta" not in line:
                continue
            for m in spelled.finditer(line):
                problems.append(f"{rel}:{n}: meta key \"{m.group(1)}\" spelled out; name meta_key::{keys[m.group(1)]}")
    for p in problems:
        print(p)
    if not problems:
        print(f"check_meta_keys: ok ({len(keys)} keys)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
