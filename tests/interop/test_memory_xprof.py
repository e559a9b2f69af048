"""xprof's memory_profile shows the memory neuronprof records.

Two captures: examples/libtorch_mlp (libtorch's CPU allocator, recorded by
the kOperator Profiler by default) and examples/custom_device_demo (a fake
NPU's HBM reported through the device plug-in API: 64 MiB of weights
allocated first and held, 8 MiB of activations per step). The pinned xprof wheel's own
converter must list each allocator, draw a timeline and find the peak that
the recorded totals give.

    NEURONPROF_BUILD_DIR=/path/to/build .venv/bin/python -m pytest \
        tests/interop/test_memory_xprof.py -q
"""

from __future__ import annotations

import json

import pytest

import xprof_tools

MiB = 1 << 20


def _memory_profile(path: str) -> dict:
  return json.loads(xprof_tools._convert(path, "memory_profile"))  # pylint: disable=protected-access


def _recorded_peak(path: str, allocator: str) -> int:
  """The highest bytes_allocated stat of the allocator's memory events."""
  space = xprof_tools.xplane_classes()["XSpace"]()
  with open(path, "rb") as f:
    space.ParseFromString(f.read())
  peak = -1
  for plane in space.planes:
    if plane.name != "/host:CPU":
      continue
    names = {i: m.name for i, m in plane.stat_metadata.items()}
    events = {i: m.name for i, m in plane.event_metadata.items()}
    for line in plane.lines:
      for event in line.events:
        if events.get(event.metadata_id) not in ("MemoryAllocation", "MemoryDeallocation"):
          continue
        stats = {names[s.metadata_id]: s for s in event.stats}
        name = stats["allocator_name"].str_value or names.get(stats["allocator_name"].ref_value)
        if name == allocator:
          peak = max(peak, stats["bytes_allocated"].int64_value)
  assert peak > 0, f"no memory events of {allocator} in {path}"
  return peak


@pytest.fixture(scope="module")
def mlp(tmp_path_factory, example_capture) -> str:
  return example_capture(tmp_path_factory.mktemp("libtorch_mlp"), "libtorch_mlp", "--epochs",
                         "3", "--batch", "16", "--hidden", "32")


@pytest.fixture(scope="module")
def npu(tmp_path_factory, example_capture) -> str:
  return example_capture(tmp_path_factory.mktemp("custom_device_demo"), "custom_device_demo",
                         "--steps", "4", "--devices", "2")


def test_libtorch_cpu_allocator_has_a_timeline_and_its_peak(mlp):
  profile = _memory_profile(mlp)["memoryProfilePerAllocator"]
  assert list(profile) == ["cpu"]
  cpu = profile["cpu"]
  assert len(cpu["sampledTimelineSnapshots"]) > 10
  peak = cpu["profileSummary"]["peakStats"]
  # xprof's peak is libtorch's own total at its highest point.
  assert int(peak["peakBytesInUse"]) == _recorded_peak(mlp, "cpu")
  assert int(peak["stackReservedBytes"]) == 0
  ops = {s["activityMetadata"]["tfOpName"] for s in cpu["sampledTimelineSnapshots"]}
  assert "aten::empty" in ops


def test_device_plugin_pools_show_weights_and_activations(npu):
  profile = _memory_profile(npu)["memoryProfilePerAllocator"]
  assert sorted(profile) == ["NPU:0/HBM", "NPU:1/HBM"]
  for pool in profile.values():
    peak = pool["profileSummary"]["peakStats"]
    assert int(peak["peakBytesInUse"]) == 64 * MiB + 8 * MiB
    assert int(peak["freeMemoryBytes"]) == 16 * 1024 * MiB - 72 * MiB
    # The weights once, then per step (4) the activations' allocation and free.
    assert len(pool["sampledTimelineSnapshots"]) == 1 + 4 * 2
