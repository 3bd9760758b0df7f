#!/usr/bin/env python3
"""Fails when C++ code spells a schema enum code as a bare integer.

The schema's enums are declared once, in trace_formats/schema/enums.h, and code
names them (`r.source == schema::range_source::dataloader`). This check reads
which columns hold which enum from trace_formats/schema/schema.cpp (a column
whose doc says "enum `x`"), the codes of each enum from enums.h, and reports an
integer literal that is one of a column's codes where it is

  compared with the column       x.copy_kind != 1, 2 == s.type, kind < 3
  assigned to it                 r.op = 2, r.kind = alloc ? 1 : 2, int64_t source = 5
  a case of a switch on it       switch (r.source) { case 5: ... }
  passed as a known enum argument emit_message(now, 2, text)
  compared with it in SQL text   "... WHERE source = 5", "kind IN (1, 2)"

A literal that is no code of the column's enum (`uint8_t source = 0` where no
source is 0, `kind != -1`) is not a code and passes. Comments are ignored.

Scanned: every C and C++ source under the repository except tests/ (tests
write and query the stored integers on purpose, as an independent check of the
codes), samples/ (programs that know nothing of the schema) and build folders.
Offenders that are known and left for now are listed, one `path: snippet` a
line, in scripts/schema_literals_allow.txt; an entry that matches nothing any
more fails the check too, so the list only shrinks.

Usage: check_schema_literals.py [--root DIR] [--allow FILE]
Exit status: 0 clean, 1 offenders or stale allow-list entries, 2 bad input.
"""

import argparse
import os
import re
import sys

# Columns whose enum is named in enums.h but not in the `enum` table (and so
# not in the column's doc as "enum `x`").
CXX_ONLY_COLUMNS = {"scope": {"op_scope"}}

# Functions that take an enum code at a known argument position (0-based).
ENUM_ARGUMENTS = {
    "emit_message": (1, "severity"),  # collector/emit.h
    "write_range": (3, "kind"),  # collector/cpu_decode.h
    "add_range": (2, "kind"),  # trace_formats/import/kineto_mapper.h
    "add_api": (1, "domain"),  # trace_formats/import/kineto_mapper.h
}

SOURCE_EXTENSIONS = (".c", ".cc", ".cpp", ".cxx", ".cu", ".h", ".hh", ".hpp")
SKIPPED_TOP = {"tests", "samples", ".git"}

INT = r"-?\d+"


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def enum_codes(enums_h):
    """{enum type: set of codes} from the X-macro lists of enums.h."""
    text = enums_h.replace("\\\n", " ")
    lists = {}
    for m in re.finditer(r"#define\s+(GPUSCOPE_ENUM_\w+)\(X, T\)(.*)", text):
        lists[m.group(1)] = {int(v) for v in re.findall(r"X\(T,\s*\w+,\s*(" + INT + r")\)", m.group(2))}
    codes = {}
    for m in re.finditer(r"\bE\((\w+),\s*(GPUSCOPE_ENUM_\w+)\)", text):
        codes[m.group(1)] = lists[m.group(2)]
    for m in re.finditer(r"GPUSCOPE_DECLARE_ENUM\((\w+),\s*(GPUSCOPE_ENUM_\w+)\)", text):
        codes[m.group(1)] = lists[m.group(2)]
    return codes


def enum_columns(schema_cpp, codes):
    """{column name: set of codes} for every column that holds an enum."""
    by_enum = {}
    for m in re.finditer(r'Column\{"(\w+)",\s*\w+,\s*"((?:[^"\\]|\\.)*)"', schema_cpp):
        for enum in re.findall(r"[Ee]num `(\w+)`", m.group(2)):
            by_enum.setdefault(m.group(1), set()).add(enum)
    for column, enums in CXX_ONLY_COLUMNS.items():
        by_enum.setdefault(column, set()).update(enums)
    columns = {}
    for column, enums in by_enum.items():
        for enum in enums:
            if enum not in codes:
                raise ValueError(f"schema.cpp names enum `{enum}` (column {column}), enums.h does not declare it")
            columns.setdefault(column, set()).update(codes[enum])
    return columns


def split_code(text):
    """(code, strings): code with comments and string contents blanked, and the
    string literals as (offset, contents). Newlines are kept for line numbers."""
    code, strings = [], []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            code.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            code.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'" and not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
            # A character literal, not a digit separator (1'000).
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            code.append(" " * (min(j, n - 1) + 1 - i))
            i = j + 1
        elif c == '"':
            raw = re.match(r'R"([^(\s]*)\(', text[i - 1:i + 20]) if i > 0 and text[i - 1] == "R" else None
            if raw:
                end = text.find(")" + raw.group(1) + '"', i)
                end = n if end < 0 else end + len(raw.group(1)) + 2
            else:
                end = i + 1
                while end < n and text[end] not in '"\n':
                    end += 2 if text[end] == "\\" else 1
                end = min(end + 1, n)
            strings.append((i, text[i + 1:end - 1]))
            code.append('"' + re.sub(r"[^\n]", " ", text[i + 1:end - 1]) + '"')
            i = end
        else:
            code.append(c)
            i += 1
    return "".join(code), strings


def top_level_args(code, open_paren):
    """The argument texts of the call whose '(' is at open_paren."""
    args, depth, start = [], 0, open_paren + 1
    for j in range(open_paren, len(code)):
        ch = code[j]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                args.append(code[start:j])
                return args
        elif ch == "," and depth == 1:
            args.append(code[start:j])
            start = j + 1
    return args


def block_end(code, brace):
    """The offset of the '}' that closes the '{' at brace."""
    depth = 0
    for j in range(brace, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code)


def switch_cases(code, brace):
    """(offset, literal text) of the integer case labels of the switch whose
    '{' is at brace, not those of switches nested in it."""
    end = block_end(code, brace)
    nested = [(m.end() - 1, block_end(code, m.end() - 1))
              for m in re.finditer(r"\bswitch\s*\([^{;]*\)\s*\{", code[brace + 1:end])]
    nested = [(brace + 1 + a, brace + 1 + b) for a, b in nested]
    for c in re.finditer(r"\bcase\s+(" + INT + r")\s*:", code[brace:end]):
        at = brace + c.start()
        if not any(a < at < b for a, b in nested):
            yield at, c.group(0), c.group(1)


def offenders(text, columns):
    """[(offset, snippet)] of integer enum codes in one file."""
    code, strings = split_code(text)
    names = "|".join(sorted(columns, key=len, reverse=True))
    col = r"(?<![\w])(?:\w+(?:\.|->))*(?P<col>" + names + r")\b"
    found = []

    def note(offset, column, values, snippet):
        if any(int(v) in columns[column] for v in values):
            found.append((offset, " ".join(snippet.split())))

    for m in re.finditer(col + r"\s*(?:==|!=|<=|>=|<|>)\s*(?P<v>" + INT + r")\b(?![.\w'])", code):
        note(m.start(), m.group("col"), [m.group("v")], m.group(0))
    for m in re.finditer(r"(?<![\w.])(?P<v>" + INT + r")\s*(?:==|!=)\s*" + col[len(r"(?<![\w])"):], code):
        note(m.start(), m.group("col"), [m.group("v")], m.group(0))
    for m in re.finditer(col + r"\s*=(?!=)\s*(?P<v>" + INT + r")\b(?![.\w'])", code):
        note(m.start(), m.group("col"), [m.group("v")], m.group(0))
    for m in re.finditer(col + r"\s*=(?!=)[^;{}]*?\?\s*(?P<a>" + INT + r")\s*:\s*(?P<b>" + INT + r")\b(?![.\w'])", code):
        note(m.start(), m.group("col"), [m.group("a"), m.group("b")], m.group(0))
    for m in re.finditer(r"\bswitch\s*\(\s*" + col + r"\s*\)\s*\{", code):
        for at, label, value in switch_cases(code, m.end() - 1):
            note(at, m.group("col"), [value], m.group(0).rstrip("{ ") + " ... " + label)
    for function, (index, column) in ENUM_ARGUMENTS.items():
        if column not in columns:
            continue
        for m in re.finditer(r"\b" + function + r"\s*\(", code):
            args = top_level_args(code, m.end() - 1)
            if index >= len(args):
                continue
            arg = args[index].strip()
            literal = re.fullmatch(INT, arg) or re.fullmatch(r".*\?\s*(" + INT + r")\s*:\s*(" + INT + r")", arg, re.S)
            if literal:
                values = literal.groups() if literal.groups() else [arg]
                note(m.start(), column, values, f"{function}(... {arg} ...)")
    sql_col = r"(?<![\w])(?:\w+\.)?(?P<col>" + names + r")\b"
    for offset, s in strings:
        for m in re.finditer(sql_col + r"\s*(?:==|=|!=|<>|<=|>=|<|>)\s*(?P<v>" + INT + r")\b(?![.\w])", s):
            note(offset + 1 + m.start(), m.group("col"), [m.group("v")], '"' + m.group(0) + '"')
        for m in re.finditer(sql_col + r"\s+(?:NOT\s+)?IN\s*\((?P<v>\s*" + INT + r"(?:\s*,\s*" + INT + r")*)\s*\)", s, re.I):
            note(offset + 1 + m.start(), m.group("col"), re.findall(INT, m.group("v")), '"' + m.group(0) + '"')
    return sorted(set(found))


def sources(root):
    for top in sorted(os.listdir(root)):
        path = os.path.join(root, top)
        if top in SKIPPED_TOP or top.startswith("build") or not os.path.isdir(path):
            continue
        for folder, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(SOURCE_EXTENSIONS):
                    yield os.path.relpath(os.path.join(folder, name), root)


def read_allow_list(path):
    allowed = []
    if not os.path.exists(path):
        return allowed
    for number, line in enumerate(read(path).splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        file, sep, snippet = line.partition(": ")
        if not sep:
            raise ValueError(f"{path}:{number}: expected `path: snippet`, got {line!r}")
        allowed.append((file.strip(), " ".join(snippet.split())))
    return allowed


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.dirname(here), help="repository root")
    parser.add_argument("--allow", help="allow-list (default: <root>/scripts/schema_literals_allow.txt)")
    args = parser.parse_args()
    root = args.root
    allow_path = args.allow or os.path.join(root, "scripts", "schema_literals_allow.txt")
    try:
        codes = enum_codes(read(os.path.join(root, "trace_formats/schema/enums.h")))
        columns = enum_columns(read(os.path.join(root, "trace_formats/schema/schema.cpp")), codes)
        allowed = read_allow_list(allow_path)
    except (OSError, ValueError, KeyError) as e:
        print(f"check_schema_literals: {e}", file=sys.stderr)
        return 2
    if not columns:
        print("check_schema_literals: no enum column found in schema.cpp", file=sys.stderr)
        return 2

    used = set()
    bad = []
    files = 0
    for rel in sources(root):
        files += 1
        text = read(os.path.join(root, rel))
        for offset, snippet in offenders(text, columns):
            if (rel, snippet) in allowed:
                used.add((rel, snippet))
                continue
            line = text.count("\n", 0, offset) + 1
            bad.append(f"{rel}:{line}: {snippet}")
    stale = [f"{file}: {snippet}" for file, snippet in allowed if (file, snippet) not in used]

    for b in bad:
        print(f"{b}   <- a schema enum code as an integer: name it (schema/enums.h)")
    for s in stale:
        print(f"{os.path.relpath(allow_path, root)}: stale entry, nothing matches it any more: {s}")
    if bad or stale:
        print(f"check_schema_literals: {len(bad)} offender(s), {len(stale)} stale allow-list entr(y/ies) "
              f"in {files} files")
        return 1
    print(f"check_schema_literals: {files} files clean ({len(used)} allow-listed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
