"""Shared helpers of the remote-capture interop tests (test_capture_*.py).

- `DemoServer`: build/examples/capture_server_demo on a free loopback port
  (the app picks it, port 0, and prints it: no race), its stdout drained by a
  thread, stopped with SIGTERM (SIGKILL as a fallback) when the test ends.
- `JaxServer`: a Python process running `jax.profiler.start_server(port)`
  and a small jitted loop with TraceAnnotation / StepTraceAnnotation markers.
- `run_cli(...)`: build/tools/neuronprof with a timeout; `require_cli_capture()`
  skips a test while the CLI has no `capture` command.
- `established_connections(port)`: TCP connections a local server has
  accepted (from /proc/net/tcp{,6}), to wait for a capture to be in flight.
- `xplanes(logdir)` and `marker_names(path)`: what a capture left, read back
  through xprof's converters (xprof_tools.py).
"""

from __future__ import annotations

import collections
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Dict, List, Optional, Sequence

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import xprof_tools  # noqa: E402  pylint: disable=wrong-import-position

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD_DIR = os.environ.get("NEURONPROF_BUILD_DIR", os.path.join(REPO, "build"))
DEMO = os.path.join(BUILD_DIR, "examples", "capture_server_demo")
CLI = os.path.join(BUILD_DIR, "tools", "neuronprof")

# The markers capture_server_demo puts in every step (StepTrace "train").
STEP_NAME = "train"
STEP_MARKERS = ("model_build", "forward", "loss_backward", "optimizer_step")
LISTENING_RE = re.compile(r"neuronprof server listening on 127\.0\.0\.1:(\d+)")
STARTUP_TIMEOUT_S = 30
EPS_US = 1e-3


def binary(path: str, target: str) -> str:
  """`path`, a binary of the build; the test fails naming its cmake target
  when it is not built."""
  if not (os.path.isfile(path) and os.access(path, os.X_OK)):
    pytest.fail(f"{path} not found; build it (cmake --build {BUILD_DIR} "
                f"--target {target}) or set NEURONPROF_BUILD_DIR")
  return path


def free_loopback_port() -> int:
  """A port free right now (for servers that cannot report the one they got)."""
  with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


class _Process:
  """A child process whose stdout+stderr a thread collects line by line."""

  def __init__(self, argv: Sequence[str], env: Optional[Dict[str, str]] = None,
               cwd: Optional[str] = None):
    self.argv = list(argv)
    self.lines: "queue.Queue[Optional[str]]" = queue.Queue()
    self.output: List[str] = []
    self._lock = threading.Lock()
    self.proc = subprocess.Popen(
        self.argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL, text=True, env=env, cwd=cwd)
    self._reader = threading.Thread(target=self._read, daemon=True)
    self._reader.start()

  def _read(self):
    for line in self.proc.stdout:
      with self._lock:
        self.output.append(line)
      self.lines.put(line)
    self.lines.put(None)

  def text(self) -> str:
    with self._lock:
      return "".join(self.output)

  def wait_for_line(self, pattern: re.Pattern, timeout_s: float) -> re.Match:
    deadline = time.monotonic() + timeout_s
    while True:
      left = deadline - time.monotonic()
      if left <= 0:
        break
      try:
        line = self.lines.get(timeout=left)
      except queue.Empty:
        break
      if line is None:
        self.proc.wait()
        pytest.fail(f"{self.argv[0]} exited ({self.proc.returncode}) before "
                    f"printing /{pattern.pattern}/:\n{self.text()}")
      match = pattern.search(line)
      if match:
        return match
    pytest.fail(f"{self.argv[0]} printed no /{pattern.pattern}/ within "
                f"{timeout_s} s:\n{self.text()}")
    raise AssertionError  # unreachable

  def alive(self) -> bool:
    return self.proc.poll() is None

  def kill(self):
    """SIGKILL, as a crash would end it."""
    if self.alive():
      self.proc.kill()
    self.proc.wait()

  def stop(self, timeout_s: float = 10) -> Optional[int]:
    """SIGTERM, then SIGKILL if it is still there after timeout_s."""
    if self.alive():
      self.proc.send_signal(signal.SIGTERM)
      try:
        self.proc.wait(timeout=timeout_s)
      except subprocess.TimeoutExpired:
        self.proc.kill()
        self.proc.wait()
    self._reader.join(timeout=5)
    return self.proc.returncode


class DemoServer(_Process):
  """capture_server_demo serving on a free loopback port."""

  def __init__(self, allowed_root: str, extra_args: Sequence[str] = (),
               env: Optional[Dict[str, str]] = None):
    """`env`: variables added to this process's (RANK, LOCAL_RANK, ...)."""
    super().__init__([binary(DEMO, "capture_server_demo"), "--port", "0",
                      "--allowed_root", allowed_root, *extra_args],
                     env=dict(os.environ, **env) if env else None)
    self.allowed_root = allowed_root
    try:
      match = self.wait_for_line(LISTENING_RE, STARTUP_TIMEOUT_S)
    except BaseException:
      self.stop()
      raise
    self.port = int(match.group(1))
    self.address = f"localhost:{self.port}"


JAX_SERVER_SCRIPT = r"""
import sys, time
import jax
import jax.numpy as jnp

port = int(sys.argv[1])
server = jax.profiler.start_server(port)

@jax.jit
def train_step(w, x):
  y = jnp.tanh(x @ w)
  return w - 0.01 * (x.T @ y), jnp.mean(y * y)

w = jnp.ones((64, 64), jnp.float32) * 0.01
x = jnp.ones((32, 64), jnp.float32)
train_step(w, x)[1].block_until_ready()  # compile before announcing
print(f"jax {jax.__version__} profiler server on port {port}", flush=True)
step = 0
while True:
  with jax.profiler.StepTraceAnnotation("jax_train", step_num=step):
    with jax.profiler.TraceAnnotation("jax_user_forward"):
      w, loss = train_step(w, x)
      loss.block_until_ready()
  step += 1
  time.sleep(0.005)
"""
JAX_READY_RE = re.compile(r"jax (\S+) profiler server on port (\d+)")
JAX_MARKERS = ("jax_train", "jax_user_forward")


class JaxServer(_Process):
  """jax.profiler.start_server(port) in a child Python running jitted steps."""

  def __init__(self):
    try:
      import jax  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    except ImportError:
      pytest.fail("jax is not installed in this Python: pip install -r "
                  "tests/interop/requirements.txt")
    self.port = free_loopback_port()
    env = dict(os.environ, JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="2")
    super().__init__([sys.executable, "-c", JAX_SERVER_SCRIPT, str(self.port)],
                     env=env)
    try:
      match = self.wait_for_line(JAX_READY_RE, 120)
    except BaseException:
      self.stop()
      raise
    self.jax_version = match.group(1)
    self.address = f"localhost:{self.port}"


# ---------------------------------------------------------------------------
# The CLI.
# ---------------------------------------------------------------------------


def run_cli(args: Sequence[str], timeout_s: float = 60) -> subprocess.CompletedProcess:
  return subprocess.run([binary(CLI, "neuronprof_cli"), *args],
                        capture_output=True, text=True, timeout=timeout_s,
                        check=False, stdin=subprocess.DEVNULL)


def cli_has_capture() -> bool:
  proc = run_cli(["capture", "--help"], timeout_s=30)
  text = proc.stdout + proc.stderr
  return "unknown command" not in text and "--service_addr" in text


def require_cli_capture():
  if not cli_has_capture():
    pytest.skip(f"{CLI} has no 'capture' command yet (build it from the "
                "capture client sources)")


def describe(proc) -> str:
  return (f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n"
          f"--- stderr\n{proc.stderr}")


# ---------------------------------------------------------------------------
# Servers' connections.
# ---------------------------------------------------------------------------


def established_connections(port: int) -> int:
  """Established TCP connections whose local port is `port` (server side)."""
  count = 0
  for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    try:
      with open(table, encoding="ascii") as f:
        rows = f.read().splitlines()[1:]
    except OSError:
      continue
    for row in rows:
      fields = row.split()
      local, state = fields[1], fields[3]
      if state == "01" and int(local.rsplit(":", 1)[1], 16) == port:
        count += 1
  return count


def wait_until(condition, timeout_s: float, what: str, interval_s: float = 0.02):
  deadline = time.monotonic() + timeout_s
  while not condition():
    if time.monotonic() > deadline:
      pytest.fail(f"timed out after {timeout_s} s waiting for {what}")
    time.sleep(interval_s)


# ---------------------------------------------------------------------------
# Reading captures back.
# ---------------------------------------------------------------------------


def run_dirs(logdir: str) -> List[str]:
  profile = os.path.join(logdir, "plugins", "profile")
  if not os.path.isdir(profile):
    return []
  return sorted(os.path.join(profile, d) for d in os.listdir(profile))


def xplanes(logdir: str) -> Dict[str, str]:
  """{host: path} of every <host>.xplane.pb under <logdir>/plugins/profile."""
  found = {}
  for run_dir in run_dirs(logdir):
    for name in os.listdir(run_dir):
      if name.endswith(".xplane.pb"):
        found[name[:-len(".xplane.pb")]] = os.path.join(run_dir, name)
  return found


def all_files(root: str) -> List[str]:
  out = []
  for dirpath, _, files in os.walk(root):
    out.extend(os.path.relpath(os.path.join(dirpath, f), root) for f in files)
  return sorted(out)


def marker_names(xplane_path: str) -> collections.Counter:
  """Counter of trace_viewer event names, step roots folded to their name."""
  names = collections.Counter()
  for ev in xprof_tools.trace_events(xplane_path):
    name = ev["name"]
    if re.fullmatch(r"\S+ \d+", name):  # "train 3" -> "train"
      name = name.split(" ")[0]
    names[name] += 1
  return names


def task_environment_stats(xplane_path: str) -> Dict[str, object]:
  """The Task Environment plane's stats by name (ints and strings)."""
  space = xprof_tools.xplane_classes()["XSpace"]()
  with open(xplane_path, "rb") as f:
    space.ParseFromString(f.read())
  for plane in space.planes:
    if plane.name != "Task Environment":
      continue
    stats = {}
    for stat in plane.stats:
      name = plane.stat_metadata[stat.metadata_id].name
      kind = stat.WhichOneof("value")
      stats[name] = getattr(stat, kind) if kind else None
    return stats
  return {}


def _end(ev) -> float:
  return ev["ts_us"] + ev["dur_us"]


def _inside(child, parent) -> bool:
  return (parent["ts_us"] - EPS_US <= child["ts_us"]
          and _end(child) <= _end(parent) + EPS_US)


def check_demo_markers(xplane_path: str, min_steps: int = 3) -> int:
  """Asserts the demo's step structure in xprof's trace viewer.

  Every complete `train N` step holds model_build (holding forward),
  loss_backward and optimizer_step, in that order. Returns the number of
  complete steps.
  """
  events = xprof_tools.trace_events(xplane_path)
  steps = [e for e in events if re.fullmatch(STEP_NAME + r" \d+", e["name"])]
  assert len(steps) >= min_steps, (
      f"{len(steps)} '{STEP_NAME} N' steps in {xplane_path}; names: "
      f"{collections.Counter(e['name'] for e in events).most_common(10)}")
  complete = 0
  for step in steps:
    same_line = [e for e in events if (e["pid"], e["tid"]) ==
                 (step["pid"], step["tid"]) and e is not step and _inside(e, step)]
    by_name: Dict[str, list] = {}
    for e in same_line:
      by_name.setdefault(e["name"], []).append(e)
    if set(by_name) != set(STEP_MARKERS):
      continue
    for name in STEP_MARKERS:
      assert len(by_name[name]) == 1, (step["name"], name, by_name[name])
    build, forward = by_name["model_build"][0], by_name["forward"][0]
    backward, optimizer = by_name["loss_backward"][0], by_name["optimizer_step"][0]
    assert _inside(forward, build), (forward, build)
    assert _end(build) <= backward["ts_us"] + EPS_US, (build, backward)
    assert _end(backward) <= optimizer["ts_us"] + EPS_US, (backward, optimizer)
    complete += 1
  # A step is recorded only when it both starts and ends inside the window,
  # so every one should be complete; allow the two at the window's edges.
  assert complete >= len(steps) - 2, (
      f"only {complete} of {len(steps)} steps hold {STEP_MARKERS} nested "
      "as the demo records them")
  return complete
