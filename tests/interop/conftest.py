"""Fixtures the interop tests share: a binary of the build under test
(capture_tools.BUILD_DIR: $NEURONPROF_BUILD_DIR, else <repo>/build) and
the one capture an example writes."""
import glob
import os
import subprocess

import pytest

import capture_tools as ct


@pytest.fixture(scope="session")
def build_binary():
  """build_binary("examples", "memory_leak"): the path of a binary of the
  build; the test fails, naming its cmake target, when it is not built."""
  def find(*parts: str) -> str:
    return ct.binary(os.path.join(ct.BUILD_DIR, *parts), parts[-1])
  return find


@pytest.fixture(scope="session")
def example_capture(build_binary):
  """example_capture(logdir, "libtorch_mlp", *args): runs the example with
  --logdir and returns the one .xplane.pb it wrote."""
  def run(logdir, example: str, *args: str) -> str:
    subprocess.run([build_binary("examples", example), "--logdir", str(logdir), *args],
                   check=True, capture_output=True, timeout=120)
    files = glob.glob(os.path.join(str(logdir), "plugins", "profile", "*", "*.xplane.pb"))
    assert len(files) == 1, files
    return files[0]
  return run


@pytest.fixture(scope="session")
def memory_leak_trace(build_binary):
  """memory_leak_trace(logdir, steps): runs examples/memory_leak for that
  many steps and returns the one Kineto .pt.trace.json.gz it wrote."""
  def run(logdir, steps: int) -> str:
    subprocess.run([build_binary("examples", "memory_leak"), "--logdir", str(logdir),
                    "--steps", str(steps)], check=True, capture_output=True, timeout=120)
    traces = glob.glob(os.path.join(str(logdir), "*", "*.pt.trace.json.gz"))
    assert len(traces) == 1, traces
    return traces[0]
  return run
