#!/usr/bin/env python3
"""scripts/check_meta_keys.py on planted trees: passes when keys are named from
the table, names a key spelled in quotes (C++ string or SQL literal) where meta
is read or written, and leaves tests/ and the table itself alone."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from planted_tree import Checks  # noqa: E402

t = Checks(pathlib.Path(sys.argv[1]) / "scripts" / "check_meta_keys.py")
check, run = t.check, t.run

table = {"trace_formats/schema/meta_keys.h": 'inline constexpr std::string_view kOriginNs = "origin_ns";\n'
                                             'inline constexpr std::string_view kHost = "host";\n'}
r = run(dict(table, **{"cli/a.cpp": 'w.set_meta(meta_key::kOriginNs, x);\nstd::string host = "host";\n'}))
check(r.returncode == 0, f"keys named from the table pass; a key word on a line without meta is not a key ({r.stdout.strip()})")
r = run(dict(table, **{"cli/a.cpp": 'int x;\nw.set_meta("origin_ns", x);\n'}))
check(r.returncode == 1 and 'cli/a.cpp:2: meta key "origin_ns" spelled out; name meta_key::kOriginNs' in r.stdout,
      f"a quoted key is named with its line and the constant ({r.stdout.strip()})")
r = run(dict(table, **{"trace_formats/store/r.cpp": "db.query_text(\"SELECT value FROM meta WHERE key='host'\");\n"}))
check(r.returncode == 1 and "r.cpp:1:" in r.stdout, "a key inside SQL too")
r = run(dict(table, **{"tests/t.cpp": 'w.set_meta("origin_ns", x);\n'}))
check(r.returncode == 0, "tests may spell keys (they check what a file holds)")
r = run({"cli/a.cpp": "\n"})
check(r.returncode == 1 and "missing" in r.stdout, "no table is an error, not a pass")
t.exit()
