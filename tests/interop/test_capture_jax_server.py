"""Our capture CLI against a real TSL-based server: jax.profiler.start_server.

A child Python (the pinned `jax`/`jaxlib` CPU wheels, see requirements.txt)
serves tensorflow.ProfilerService on a free loopback port while it runs a
jitted training step inside StepTraceAnnotation / TraceAnnotation markers.
`neuronprof capture` takes a 2 s window from it; xprof's trace viewer must
show JAX's own events (our annotations and XLA's runtime events) in the
profile the CLI wrote.
"""

from __future__ import annotations

import os

import pytest

import capture_tools as ct
import xprof_tools


@pytest.fixture(scope="module")
def jax_server():
  server = ct.JaxServer()
  try:
    yield server
  finally:
    server.stop()


def test_cli_captures_a_jax_profiler_server(jax_server, tmp_path):
  ct.require_cli_capture()
  logdir = str(tmp_path / "logs")
  proc = ct.run_cli(["capture", "--service_addr", jax_server.address,
                     "--logdir", logdir, "--duration_ms", "2000", "--progress"],
                    timeout_s=90)
  assert proc.returncode == 0, ct.describe(proc)
  assert jax_server.alive(), jax_server.text()

  runs = ct.run_dirs(logdir)
  assert len(runs) == 1, (runs, ct.all_files(logdir))
  found = ct.xplanes(logdir)
  assert len(found) == 1, (found, ct.all_files(logdir))
  (host, path), = found.items()
  assert os.path.getsize(path) > 0
  # By default the Kineto trace (which Perfetto opens too), no Chrome trace.
  assert os.path.isfile(os.path.join(logdir, os.path.basename(runs[0]),
                                     host + ".pt.trace.json.gz")), ct.all_files(logdir)
  assert not os.path.exists(os.path.join(runs[0], host + ".trace.json.gz"))
  # The CLI says where the profile went.
  assert host in proc.stdout + proc.stderr, ct.describe(proc)
  # Its progress names each stage as it begins, in order. TSL's server does
  # not announce its response's size: "receiving" comes without one.
  stages = []
  for line in proc.stderr.splitlines():
    stage = "window" if line.startswith("window ") else line
    if stage in ("window", "server collecting", "receiving", "writing") and \
        stages[-1:] != [stage]:
      stages.append(stage)
  assert stages == ["window", "server collecting", "receiving", "writing"], \
      ct.describe(proc)

  # TSL's server does not answer neuronprof's clock probe (Monitor with
  # duration_ms 0): the capture goes on, its times stay on the server's
  # clock, and both the CLI and the file say the offset is unmeasured.
  assert "  clock_offset: unmeasured" in proc.stdout, ct.describe(proc)
  stats = ct.task_environment_stats(path)
  assert stats.get("clock_alignment") == "unmeasured", stats
  assert "clock_offset_ns" not in stats, stats

  names = ct.marker_names(path)
  # ~2 s of 5 ms steps: JAX's annotations, many times over.
  assert names["jax_user_forward"] >= 20, names.most_common(20)
  assert names["jax_train"] >= 20, names.most_common(20)
  # And XLA's own runtime events, which only JAX's tracer records.
  assert any("PjitFunction" in n or "train_step" in n for n in names), \
      names.most_common(30)

  # The annotation nests inside the step marker on the Python thread.
  events = xprof_tools.trace_events(path)
  steps = [e for e in events if e["name"].startswith("jax_train")]
  forwards = [e for e in events if e["name"] == "jax_user_forward"]
  nested = sum(
      any(s["tid"] == f["tid"] and s["ts_us"] <= f["ts_us"] + ct.EPS_US and
          f["ts_us"] + f["dur_us"] <= s["ts_us"] + s["dur_us"] + ct.EPS_US
          for s in steps) for f in forwards)
  assert nested >= len(forwards) - 2, (nested, len(forwards))


def test_xprof_client_captures_the_jax_server(jax_server, tmp_path):
  """Baseline: xprof's own capture client (the Capture Profile button's
  function) gets JAX's markers from the same server."""
  from xprof.convert import _pywrap_profiler_plugin  # pylint: disable=import-outside-toplevel

  logdir = str(tmp_path / "xprof_logs")
  _pywrap_profiler_plugin.trace(
      jax_server.address, logdir, None, True, 1000, 1,
      {"host_tracer_level": 2, "device_tracer_level": 1,
       "python_tracer_level": 0, "delay_ms": 0})
  found = ct.xplanes(logdir)
  # TSL's server names the file after the client's host_name, the address
  # with ':' replaced by '_'.
  assert list(found) == [f"localhost_{jax_server.port}"], ct.all_files(logdir)
  names = ct.marker_names(found[f"localhost_{jax_server.port}"])
  assert names["jax_user_forward"] >= 10, names.most_common(20)
