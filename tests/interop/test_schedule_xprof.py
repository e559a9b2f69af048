"""Step schedules read back by xprof: examples/training_schedule's two runs.

schedule(wait=1, warmup=1, active=3, repeat=2) over 12 steps writes two run
folders; xprof's overview page must count three steps in each, with the
step numbers of the active steps (2-4, 7-9) and none of the warmup steps.

    NEURONPROF_BUILD_DIR=/path/to/build .venv/bin/python -m pytest \
      tests/interop/test_schedule_xprof.py -q
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import xprof_tools  # noqa: E402  pylint: disable=wrong-import-position

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD_DIR = os.environ.get("NEURONPROF_BUILD_DIR", os.path.join(REPO, "build"))
EXAMPLE = os.path.join(BUILD_DIR, "examples", "training_schedule")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
  if not (os.path.isfile(EXAMPLE) and os.access(EXAMPLE, os.X_OK)):
    pytest.fail(f"training_schedule not found at {EXAMPLE}; build it "
                f"(cmake --build {BUILD_DIR} --target training_schedule)")
  logdir = str(tmp_path_factory.mktemp("schedule"))
  proc = subprocess.run([EXAMPLE, "--logdir", logdir, "--steps", "12"],
                        capture_output=True, text=True, timeout=300, check=False)
  assert proc.returncode == 0, proc.stderr
  profile = os.path.join(logdir, "plugins", "profile")
  found = []
  for run in sorted(os.listdir(profile)):
    files = [f for f in os.listdir(os.path.join(profile, run))
             if f.endswith(".xplane.pb")]
    assert len(files) == 1, (run, files)
    found.append(os.path.join(profile, run, files[0]))
  return found


def test_two_runs_of_three_steps_each(runs):
  assert len(runs) == 2
  # Names sort in cycle order, and xprof counts each run's active steps.
  steps = [[row["step"] for row in xprof_tools.overview_step_times(path)]
           for path in runs]
  assert [len(s) for s in steps] == [3, 3]
  # xprof names each step "<marker> <step_num>".
  assert [sorted(int(n.split()[-1]) for n in s) for s in steps] == [
      [2, 3, 4], [7, 8, 9]]
