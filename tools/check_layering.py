#!/usr/bin/env python3
"""Checks that every project include follows the module table of docs/ARCHITECTURE.md.

The table ("## Modules") names each module (`core` is src/core/, `tools/` is
the top-level tools/ folder) and, in its "may include" column, the modules its
files may include. A module may only name modules above it, so dependencies
flow down the table. The "## Public headers" table says which module owns each
include/neuronprof/ header; including one counts as using that module.

Every file under the modules' folders is scanned for `#include "src/..."` and
`#include "neuronprof/..."`; an include of a module that is not the file's own
and not in its "may include" list is reported as file:line and the check fails.

The CMake targets must say the same: each `neuronprof_module(<name> ...
MAY_INCLUDE ...)` call in a CMakeLists.txt under src/ (the module whose
path, with `_` for `/`, is <name>, or whose folder ends in <name>) must list exactly the table's "may include" modules,
and every src/ module of the table must have one.

Usage: check_layering.py [--root DIR]   (DIR defaults to this repository)
Exit status: 0 clean, 1 layering violations, 2 a table that cannot be used.
Python 3 standard library only.
"""

import argparse
import os
import re
import sys

TABLE = os.path.join("docs", "ARCHITECTURE.md")
SOURCE_SUFFIXES = (".h", ".cc", ".cpp", ".hpp", ".cu")
INCLUDE = re.compile(r'^\s*#\s*include\s*"((?:src|neuronprof)/[^"]+)"')
NAME = re.compile(r"`([^`]+)`")
MODULE_CALL = re.compile(r"^\s*neuronprof_module\(\s*([A-Za-z0-9_]+)([^)]*)\)", re.M)
MODULE_KEYWORDS = ("SOURCES", "MAY_INCLUDE", "DEPENDS")


class TableError(Exception):
    pass


def read_table(lines, heading):
    """Rows of the first markdown table after `heading`, as dicts by column name."""
    try:
        start = lines.index(heading)
    except ValueError:
        raise TableError(f"{TABLE} has no '{heading}' section")
    block = []
    for line in lines[start + 1:]:
        if line.startswith("|"):
            block.append(line)
        elif block:
            break
    if len(block) < 3:
        raise TableError(f"{TABLE}: '{heading}' has no table")
    split = lambda l: [c.strip() for c in l.strip().strip("|").split("|")]
    columns = [c.lower() for c in split(block[0])]
    return [dict(zip(columns, split(l))) for l in block[2:]]


def names_in(cell):
    return NAME.findall(cell or "")


def folder_of(module):
    """`tools/` is a top-level folder; any other module lives under src/."""
    return module.rstrip("/") if module.endswith("/") else "src/" + module


def load_rules(root):
    with open(os.path.join(root, TABLE), encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f]
    order, allowed = [], {}
    for row in read_table(lines, "## Modules (`src/<module>/`)"):
        if "may include" not in row:
            raise TableError(f"{TABLE}: the module table needs a 'may include' column")
        names = names_in(row.get("module"))
        if len(names) != 1:
            raise TableError(f"{TABLE}: a module row needs one `name`, not: {row.get('module')}")
        module = names[0]
        uses = names_in(row["may include"])
        for used in uses:
            if used not in allowed:
                raise TableError(
                    f"{TABLE}: `{module}` may include `{used}`, which is not a module "
                    f"above it in the table (dependencies flow down the table only)")
        order.append(module)
        allowed[module] = set(uses)
    owners = {}
    for row in read_table(lines, "## Public headers"):
        module = (names_in(row.get("module")) or [None])[0]
        if module not in allowed:
            raise TableError(f"{TABLE}: public header row names no module of the table: {row}")
        for header in names_in(row.get("header")):
            owners["neuronprof/" + header] = module
    return order, allowed, owners


def module_of_path(path, modules):
    """The module whose folder holds `path` (the deepest one), or None."""
    best = None
    for module in modules:
        folder = folder_of(module) + "/"
        if path.startswith(folder) and (best is None or len(folder) > len(folder_of(best))):
            best = module
    return best


def source_files(root, modules):
    for module in modules:
        top = os.path.join(root, folder_of(module))
        for dirpath, _, files in os.walk(top):
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def cmake_problems(root, order, allowed):
    """Differences between neuronprof_module() calls and the module table."""
    # A target is named by its module's path with "_" for "/" (`analysis/ops`
    # is neuronprof_module(analysis_ops)), or by the folder's last name
    # (`collectors/torch` is neuronprof_module(torch)).
    by_leaf = {m.rstrip("/").split("/")[-1]: m for m in order}
    by_leaf.update({m.rstrip("/").replace("/", "_"): m for m in order})
    problems, defined = [], set()
    for dirpath, _, files in os.walk(os.path.join(root, "src")):
        if "CMakeLists.txt" not in files:
            continue
        path = os.path.relpath(os.path.join(dirpath, "CMakeLists.txt"), root)
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        for call in MODULE_CALL.finditer(text):
            line = text.count("\n", 0, call.start()) + 1
            name = call.group(1)
            module = by_leaf.get(name)
            if module is None:
                problems.append(f"{path}:{line}: neuronprof_module({name}) is no module of {TABLE}")
                continue
            defined.add(module)
            listed, keyword = set(), None
            for token in call.group(2).split():
                if token in MODULE_KEYWORDS:
                    keyword = token
                elif keyword == "MAY_INCLUDE":
                    listed.add(by_leaf.get(token, token))
            if listed != allowed[module]:
                said = " ".join(sorted(listed)) or "nothing"
                may = ", ".join(f"`{m}`" for m in sorted(allowed[module])) or "no other module"
                problems.append(f"{path}:{line}: neuronprof_module({name}) MAY_INCLUDE {said}, "
                                f"but {TABLE} lets `{module}` include {may}")
    if defined:
        for module in order:
            if not module.endswith("/") and module not in defined:
                problems.append(f"src/: `{module}` of {TABLE} has no neuronprof_module() target")
    return problems


def check(root):
    order, allowed, owners = load_rules(root)
    problems = cmake_problems(root, order, allowed)
    for path in sorted(set(source_files(root, order))):
        module = module_of_path(path, order)
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                target = match.group(1)
                if target.startswith("neuronprof/"):
                    used = owners.get(target)
                    if used is None:
                        problems.append(f"{path}:{number}: includes \"{target}\", a public header "
                                        f"the '## Public headers' table of {TABLE} does not list")
                        continue
                else:
                    used = module_of_path(target, order)
                    if used is None:
                        problems.append(f"{path}:{number}: includes \"{target}\", which is in no "
                                        f"module of {TABLE}")
                        continue
                if used == module or used in allowed[module]:
                    continue
                direction = ("up the table" if order.index(used) > order.index(module)
                             else "into a module it may not include")
                may = ", ".join(f"`{m}`" for m in sorted(allowed[module])) or "no other module"
                problems.append(f"{path}:{number}: module `{module}` includes `{used}` "
                                f"(\"{target}\"), {direction}; {TABLE} lets `{module}` "
                                f"include {may}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="repository root (default: the one holding this script)")
    root = parser.parse_args().root
    try:
        problems = check(root)
    except (TableError, OSError) as error:
        print(f"check_layering: {error}", file=sys.stderr)
        return 2
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check_layering: {len(problems)} include(s) or target(s) break the module table "
              f"of {TABLE}; move the code or change the table and the CMake targets on purpose",
              file=sys.stderr)
        return 1
    print(f"check_layering: every include and module target follows the module table of {TABLE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
