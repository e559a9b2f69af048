#!/usr/bin/env python3
"""tools/check_layering.py must reject the fixture tree's two bad includes.

The ctest `layering` proves the real tree is clean; this proves the check can
fail: on tests/tools/layering_fixture/ it must exit 1 and name each bad
include by file:line, the modules involved and what the table allows.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "tools", "check_layering.py")
FIXTURE = os.path.join(HERE, "layering_fixture")

def run_on_edited_copy(test, edits):
    """Runs the check on a copy of the fixture after `edits`: (path, old, new)
    replacements, each of which must change its file."""
    with tempfile.TemporaryDirectory() as root:
        shutil.copytree(FIXTURE, root, dirs_exist_ok=True)
        for path, old, new in edits:
            full = os.path.join(root, path)
            with open(full, encoding="utf-8") as f:
                text = f.read()
            test.assertIn(old, text)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text.replace(old, new))
        return subprocess.run([sys.executable, SCRIPT, "--root", root],
                              capture_output=True, text=True)


class CheckLayeringRejectsTest(unittest.TestCase):
    def test_reports_upward_and_unlisted_includes(self):
        run = subprocess.run([sys.executable, SCRIPT, "--root", FIXTURE],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        problems = [l for l in run.stderr.splitlines() if l.startswith("src/")]
        self.assertEqual(problems, [
            'src/high/high.h:4: module `high` includes `low` ("src/low/low.h"), into a module '
            'it may not include; docs/ARCHITECTURE.md lets `high` include `mid`',
            'src/low/bad.cc:3: module `low` includes `high` ("src/high/high.h"), up the '
            'table; docs/ARCHITECTURE.md lets `low` include no other module',
        ])

    def test_refuses_a_table_that_lets_a_module_use_one_below_it(self):
        run = run_on_edited_copy(self, [(os.path.join("docs", "ARCHITECTURE.md"),
                                         "| `mid` | the middle | `low` |",
                                         "| `mid` | the middle | `high` |")])
        self.assertEqual(run.returncode, 2, run.stdout + run.stderr)
        self.assertIn("`mid` may include `high`, which is not a module above it", run.stderr)

    def test_reports_cmake_targets_that_disagree_with_the_table(self):
        cmake = os.path.join("src", "CMakeLists.txt")
        run = run_on_edited_copy(self, [
            (cmake, "MAY_INCLUDE mid)", "MAY_INCLUDE mid low)"),
            (cmake, "neuronprof_module(low SOURCES low/bad.cc)\n", ""),
        ])
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertIn("src/CMakeLists.txt:3: neuronprof_module(high) MAY_INCLUDE low mid, but "
                      "docs/ARCHITECTURE.md lets `high` include `mid`", run.stderr)
        self.assertIn("src/: `low` of docs/ARCHITECTURE.md has no neuronprof_module() target",
                      run.stderr)


REPO = os.path.join(HERE, "..", "..")


def run_on_repo_copy(test, edits):
    """Runs the check on a copy of this repository's src/, tools/ and
    docs/ARCHITECTURE.md after `edits`, as run_on_edited_copy does."""
    with tempfile.TemporaryDirectory() as root:
        for folder in ("src", "tools"):
            shutil.copytree(os.path.join(REPO, folder), os.path.join(root, folder))
        os.makedirs(os.path.join(root, "docs"))
        shutil.copy(os.path.join(REPO, "docs", "ARCHITECTURE.md"), os.path.join(root, "docs"))
        for path, old, new in edits:
            full = os.path.join(root, path)
            with open(full, encoding="utf-8") as f:
                text = f.read()
            test.assertIn(old, text)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text.replace(old, new, 1))
        return subprocess.run([sys.executable, SCRIPT, "--root", root],
                              capture_output=True, text=True)


class RealTreeOrderTest(unittest.TestCase):
    """The analysis sub-modules' order of the real table is enforced."""

    def test_a_planted_back_edge_between_analysis_sub_modules_fails(self):
        host_spans = os.path.join("src", "analysis", "timeline", "host_spans.cc")
        run = run_on_repo_copy(self, [(host_spans, '#include "src/analysis/timeline/host_spans.h"\n',
                                       '#include "src/analysis/timeline/host_spans.h"\n'
                                       '#include "src/analysis/report/summary.h"\n')])
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertIn("src/analysis/timeline/host_spans.cc:2: module `analysis/timeline` includes "
                      "`analysis/report` (\"src/analysis/report/summary.h\"), up the table",
                      run.stderr)

    def test_a_sub_module_target_that_lists_a_module_below_fails(self):
        cmake = os.path.join("src", "CMakeLists.txt")
        run = run_on_repo_copy(self, [(cmake, "MAY_INCLUDE xplane analysis_timeline\n",
                                       "MAY_INCLUDE xplane analysis_timeline analysis_markers\n")])
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertIn("neuronprof_module(analysis_ops) MAY_INCLUDE analysis/markers analysis/timeline "
                      "xplane, but docs/ARCHITECTURE.md lets `analysis/ops` include "
                      "`analysis/timeline`, `xplane`", run.stderr)


if __name__ == "__main__":
    unittest.main()
