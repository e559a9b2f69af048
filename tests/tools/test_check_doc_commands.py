#!/usr/bin/env python3
"""tools/check_doc_commands.py must run what the docs say and fail loudly.

The ctest `docs_commands` runs the real README.md and docs/; this proves the
check can fail: on a small tree of markdown files it must run `sh` blocks in
order in a scratch folder, leave `skip-ci:` blocks alone, and name the file,
line and command of a failure, an untagged block and a block that hangs.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "tools", "check_doc_commands.py")
FENCE = "```"


def run_check(files, *extra):
    """Writes `files` (path -> markdown) into a fresh root with a build
    folder holding an executable `tool`, and runs the check on it."""
    root = tempfile.mkdtemp(prefix="doc_check_test_")
    unittest.addModuleCleanup(shutil.rmtree, root, ignore_errors=True)
    os.makedirs(os.path.join(root, "build"))
    tool = os.path.join(root, "build", "tool")
    with open(tool, "w") as f:
        f.write("#!/bin/sh\necho tool ran \"$@\"\n")
    os.chmod(tool, 0o755)
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(text).replace("FENCE", FENCE))
    run = subprocess.run([sys.executable, SCRIPT, "--root", root, *extra],
                         capture_output=True, text=True)
    return root, run


class CheckDocCommandsTest(unittest.TestCase):
    def test_runs_blocks_in_order_in_a_scratch_folder(self):
        root, run = run_check({
            "README.md": """\
                # r
                FENCEsh
                build/tool first > out.txt
                sleep 600 &
                FENCE
                FENCEtext
                not a command
                FENCE
                FENCEsh skip-ci:gpu
                false
                FENCE
                FENCEsh
                grep -q 'tool ran first' out.txt
                FENCE
            """,
            "docs/guide/page.md": "# p\nFENCEbash\nbuild/tool second\nFENCE\n",
        })
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("README.md: 2 command blocks to run, 1 marked skip-ci", run.stdout)
        self.assertIn("docs/guide/page.md: 1 command blocks to run", run.stdout)
        self.assertFalse(os.path.exists(os.path.join(root, "out.txt")),
                         "commands must run in a scratch folder, not in the tree")

    def test_names_the_file_line_and_command_that_failed(self):
        _, run = run_check({
            "README.md": """\
                # r
                FENCEsh
                build/tool ok
                build/tool --flag && \\
                    build/missing_binary --logdir logs
                echo never-reached
                FENCE
            """,
        })
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertIn("README.md:4: command failed (exit status 1): build/tool --flag && \\",
                      run.stderr)
        self.assertIn("build/missing_binary", run.stderr)
        self.assertNotIn("never-reached", run.stdout + run.stderr)

    def test_refuses_an_untagged_block(self):
        _, run = run_check({"docs/a.md": "# a\n\nFENCE\nbuild/tool\nFENCE\n"})
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertIn("docs/a.md:3: a code block without a language", run.stderr)

    def test_stops_a_block_that_runs_too_long(self):
        _, run = run_check({"docs/a.md": "# a\nFENCEsh\nbuild/tool\nsleep 30\nFENCE\n"},
                           "--timeout", "2")
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)
        self.assertIn("docs/a.md:4: still running after 2 s", run.stderr)
        self.assertIn("sleep 30", run.stderr)


if __name__ == "__main__":
    unittest.main()
