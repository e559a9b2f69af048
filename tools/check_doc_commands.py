#!/usr/bin/env python3
"""Runs the shell blocks of README.md, docs/**/*.md and examples/**/README.md.

Every fenced code block must say what it holds (```sh, ```text, ```cpp ...),
so no command hides in an untagged block. Blocks tagged `sh` or `bash` are
commands: each file's blocks run in order, in one bash (set -e, pipefail),
in a scratch folder that holds links to the repository's top-level entries
and `build` -> the build directory given (the one the quick start made, so
nothing is built twice). A block that cannot run here says why in its fence:

    ```sh skip-ci:gpu        (also skip-ci:ui, skip-ci:network, skip-ci:long,
                              skip-ci:hosts, skip-ci:quickstart ...)

A failing command is reported as file:line, the command and the last lines
it printed; background jobs a file started are stopped when its blocks end.

Usage: check_doc_commands.py [--root DIR] [--build DIR] [--timeout S] [FILE ...]
  FILE: markdown files relative to --root (default: README.md, docs/**/*.md,
        examples/**/README.md)
Exit status: 0 every block ran, 1 a command failed or a block is untagged.
Python 3 standard library only.
"""

import argparse
import glob
import os
import re
import signal
import subprocess
import sys
import tempfile

RUN_LANGUAGES = ("sh", "bash")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
SKIP = re.compile(r"\bskip-ci:([A-Za-z0-9_-]+)")
FAIL_MARK = "__doc_command_failed__"


class Block:
    def __init__(self, path, line, info, lines):
        self.path, self.line, self.info, self.lines = path, line, info, lines

    @property
    def language(self):
        return self.info.split()[0] if self.info.split() else ""

    @property
    def skip_reason(self):
        match = SKIP.search(self.info)
        return match.group(1) if match else None


def read_blocks(root, path):
    """The fenced blocks of a markdown file, and problems (untagged fences)."""
    blocks, problems = [], []
    with open(os.path.join(root, path), encoding="utf-8") as f:
        lines = f.read().splitlines()
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, info, start = match.group(1), match.group(2).strip(), i + 1
        body = []
        i += 1
        while i < len(lines) and not lines[i].lstrip().startswith(fence):
            body.append(lines[i])
            i += 1
        i += 1
        if not info:
            problems.append(f"{path}:{start}: a code block without a language: tag it "
                            f"```sh (runs in CI), ```sh skip-ci:<why>, or ```text for output")
            continue
        blocks.append(Block(path, start, info, body))
    return blocks, problems


def script_for(blocks):
    """One bash script for a file's command blocks, and a map from its line
    numbers to (markdown line, text)."""
    head = [
        "set -eE -o pipefail",
        f"trap 'echo \"{FAIL_MARK} $LINENO\" >&2; exit 1' ERR",
        # SIGKILL: a job that outlived its block is not asked to go. CI's ASan
        # stage once saw a `sleep 600 &` survive SIGTERM here, and the
        # `wait` ran into the file's timeout.
        "trap 'trap - ERR DEBUG; set +e; kill -9 $(jobs -p) 2>/dev/null; wait' EXIT",
        'trap \'echo "$LINENO" > "$DOC_CHECK_POSITION"\' DEBUG',
    ]
    script, where = list(head), {}
    for block in blocks:
        for offset, text in enumerate(block.lines):
            script.append(text)
            where[len(script)] = (block.line + 1 + offset, text)
    return "\n".join(script) + "\n", where


def make_scratch(root, build, scratch):
    for name in os.listdir(root):
        if name in (".git", "build", "logs") or name.startswith("build-"):
            continue
        os.symlink(os.path.join(root, name), os.path.join(scratch, name))
    os.symlink(build, os.path.join(scratch, "build"))


def command_at(where, lineno):
    """The markdown line of a script line; a continued command reports its
    first line."""
    line, text = where.get(lineno, (None, ""))
    while lineno - 1 in where and where[lineno - 1][1].rstrip().endswith("\\"):
        lineno -= 1
        line, text = where[lineno]
    return line, text


def run_file(root, build, path, timeout):
    """Runs one file's command blocks; returns a list of failure messages."""
    blocks, problems = read_blocks(root, path)
    commands = [b for b in blocks if b.language in RUN_LANGUAGES and not b.skip_reason]
    skipped = [b for b in blocks if b.language in RUN_LANGUAGES and b.skip_reason]
    print(f"{path}: {len(commands)} command blocks to run, {len(skipped)} marked skip-ci",
          flush=True)
    if problems or not commands:
        return problems
    script, where = script_for(commands)
    with tempfile.TemporaryDirectory(prefix="doc_commands_") as scratch:
        work = os.path.join(scratch, "repo")
        os.mkdir(work)
        make_scratch(root, build, work)
        position = os.path.join(scratch, "position")
        script_path = os.path.join(scratch, "commands.sh")
        with open(script_path, "w", encoding="utf-8") as f:
            f.write(script)
        env = dict(os.environ, DOC_CHECK_POSITION=position, TMPDIR=scratch)
        # A session of its own, so that a timeout stops every process the
        # commands started, not only bash.
        process = subprocess.Popen(["bash", script_path], cwd=work, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   errors="replace", start_new_session=True)
        try:
            stdout, _ = process.communicate(timeout=timeout)
            run = subprocess.CompletedProcess(process.args, process.returncode, stdout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            try:
                with open(position) as f:
                    line, text = command_at(where, int(f.read().strip() or 0))
            except (OSError, ValueError):
                line, text = None, "?"
            return [f"{path}:{line}: still running after {timeout} s (mark a long block "
                    f"skip-ci:long or shorten it): {text.strip()}\n" + tail(output)]
        if run.returncode == 0:
            return []
        marks = [l for l in run.stdout.splitlines() if l.startswith(FAIL_MARK)]
        lineno = int(marks[-1].split()[1]) if marks else 0
        line, text = command_at(where, lineno)
        output = "\n".join(l for l in run.stdout.splitlines() if not l.startswith(FAIL_MARK))
        return [f"{path}:{line}: command failed (exit status {run.returncode}): "
                f"{text.strip()}\n" + tail(output)]


def tail(output, count=25):
    lines = output.splitlines()[-count:]
    return "".join(f"    | {l}\n" for l in lines)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(here))
    parser.add_argument("--build", help="build directory (default: ROOT/build)")
    parser.add_argument("--timeout", type=int, default=240, help="seconds per file")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    build = os.path.abspath(args.build or os.path.join(root, "build"))
    readme = ["README.md"] if os.path.exists(os.path.join(root, "README.md")) else []
    pages = [p for pattern in (("docs", "**", "*.md"), ("examples", "**", "README.md"))
             for p in glob.glob(os.path.join(root, *pattern), recursive=True)]
    files = args.files or (readme + sorted(os.path.relpath(p, root) for p in pages))
    failures = []
    for path in files:
        failures += run_file(root, build, path, args.timeout)
    for failure in failures:
        print(failure, file=sys.stderr, end="" if failure.endswith("\n") else "\n")
    if failures:
        print(f"check_doc_commands: {len(failures)} problem(s)", file=sys.stderr)
        return 1
    print(f"check_doc_commands: every command of {len(files)} files ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
