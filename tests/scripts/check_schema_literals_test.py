#!/usr/bin/env python3
"""scripts/check_schema_literals.py (run on this tree by the ctest
`schema_literals`) fails on offenders planted in a copy of the schema sources,
every pattern it claims to catch; passes their named forms; honours its
allow-list and fails on a stale entry."""

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

SOURCE_DIR = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
SCRIPT = os.path.join(SOURCE_DIR, "scripts", "check_schema_literals.py")

# One offender a line; the test expects each line number in the report.
PLANTED = textwrap.dedent("""\
    void planted(Row& r, const Rec& x, Sync s, bool alloc, int64_t now) {
      if (x.copy_kind != 1) return;
      r.op = 2;
      if (2 == s.type) return;
      r.kind = alloc ? 1 : 2;
      switch (r.source) { case 5: break; }
      emit_message(now, 2, "text");
      auto q = db.query("SELECT 1 FROM range WHERE source = 5");
      auto p = db.query("SELECT 1 FROM range r WHERE r.kind IN (1, 2)");
      int64_t severity = 3;
      if (rec->mem_kind >= 3) return;
      r.scope = 1;
    }
    """)

CLEAN = textwrap.dedent("""\
    // kind == 3 in a comment, r.op = 2 /* here too */
    void clean(Row& r, const Rec& x, bool alloc, int64_t now) {
      if (x.copy_kind != schema::copy_kind::HtoD) return;
      r.op = alloc ? schema::memory_op::alloc : schema::memory_op::free;
      uint8_t source = 0;    // no source has code 0
      if (r.kind != -1) return;
      if (sizeof(r.kind) == 4) return;
      int64_t big = 1'000;
      const char* text = "prose names a source, kind 3: not SQL";
      emit_message(now, schema::severity::warning, "2");
      auto q = db.query("SELECT 1 FROM range WHERE source = " + std::to_string(schema::range_source::nvtx));
      switch (r.source) {
        case schema::range_source::nvtx:
          switch (x.aux) { case 2: break; }
          break;
      }
    }
    """)


def run(root, *extra):
    return subprocess.run([sys.executable, SCRIPT, "--root", root, *extra], capture_output=True, text=True)


class CheckSchemaLiterals(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="schema_literals_")
        schema = os.path.join(self.root, "trace_formats", "schema")
        os.makedirs(schema)
        for name in ("enums.h", "schema.cpp"):
            shutil.copy(os.path.join(SOURCE_DIR, "trace_formats", "schema", name), schema)
        os.makedirs(os.path.join(self.root, "scripts"))

    def tearDown(self):
        shutil.rmtree(self.root)

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def test_every_planted_offender_is_reported(self):
        self.write("analyzer/planted.cpp", PLANTED)
        r = run(self.root)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        lines = PLANTED.splitlines()
        for number in range(2, len(lines)):  # every line but the signature and the closing brace
            with self.subTest(line=lines[number - 1].strip()):
                self.assertIn(f"analyzer/planted.cpp:{number}:", r.stdout)

    def test_names_comments_and_non_codes_pass(self):
        self.write("collector/clean.cpp", CLEAN)
        r = run(self.root)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_tests_and_samples_are_not_scanned(self):
        self.write("tests/analyzer/fixture.cpp", PLANTED)
        self.write("samples/loop.cu", PLANTED)
        r = run(self.root)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_allow_list_lets_listed_sites_pass_and_fails_on_stale_entries(self):
        self.write("gui/model/load.cpp", "bool m(int64_t kind) { return kind == 3; }\n")
        self.assertEqual(run(self.root).returncode, 1)
        allow = os.path.join(self.root, "scripts", "schema_literals_allow.txt")
        with open(allow, "w") as f:
            f.write("# the viewer's, for now\ngui/model/load.cpp: kind == 3\n")
        r = run(self.root)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.write("gui/model/load.cpp", "bool m(int64_t kind) { return kind == schema::range_kind::mark; }\n")
        r = run(self.root)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("stale entry", r.stdout)

    def test_an_enum_the_schema_names_but_enums_h_lacks_is_bad_input(self):
        enums = os.path.join(self.root, "trace_formats", "schema", "enums.h")
        with open(enums) as f:
            text = f.read()
        with open(enums, "w") as f:
            f.write(text.replace("E(severity, GPUSCOPE_ENUM_SEVERITY)", ""))
        r = run(self.root)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("severity", r.stderr)


if __name__ == "__main__":
    unittest.main()
