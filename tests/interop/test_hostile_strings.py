"""Hostile bytes in marker names and arguments: every file stays readable.

build/tests/write_hostile_capture records, through the public API, a marker
whose name, thread name, argument key and string value are bytes that are
not UTF-8 (a stray byte, an encoded surrogate, an overlong, a cut sequence)
mixed with control characters, quotes and backslashes, plus NaN, inf and
-inf double arguments. Then:
  - both JSON files (trace.json.gz, .pt.trace.json.gz) load with Python's
    json in strict mode: UTF-8 decoding that refuses bad bytes, NaN and
    Infinity refused, no lone surrogates;
  - Python's protobuf (what xprof uses) parses the .xplane.pb;
  - xprof's trace viewer route shows the marker, named with U+FFFD, with
    its arguments, and its JSON is strict too.
Expected text is Python's own bytes.decode("utf-8", "replace"): one U+FFFD
per maximal subpart, as our writer does.

    NEURONPROF_BUILD_DIR=/path/to/build python -m pytest tests/interop/test_hostile_strings.py
"""

from __future__ import annotations

import gzip
import json
import subprocess

import pytest

import xprof_tools

BAD = b"\xff\xed\xa0\x80\xc0\xaf\xe2\x82"
# \x1e / \x1f too: argument keys and values are stored length-prefixed
# (src/core/event_args.h), so no byte is special.
NAME = b'layer "q" \\ \x01\x1b\x1e\x1f\t ' + BAD + b" end"
TEXT = b"value \x1e\x1f " + BAD + b'\n"\\'
THREAD = b"thread " + BAD
KEY = b"key \x1f\x1e " + BAD


def fixed(raw: bytes) -> str:
  return raw.decode("utf-8", "replace")


def refuse_constant(name):
  raise ValueError(f"non-standard JSON constant {name}")


def strict_json(data: bytes):
  """json.loads that refuses bad UTF-8, NaN/Infinity and lone surrogates."""
  value = json.loads(data.decode("utf-8"), parse_constant=refuse_constant)

  def check(node):
    if isinstance(node, str):
      node.encode("utf-8")  # Raises on a lone surrogate from a \\u escape.
    elif isinstance(node, list):
      for item in node:
        check(item)
    elif isinstance(node, dict):
      for k, v in node.items():
        check(k)
        check(v)

  check(value)
  return value


# The marker's arguments as an initializer list and as typed Arg()s
# (issue 24): both must give the same files.
@pytest.fixture(scope="module", params=["list", "typed"])
def files(tmp_path_factory, request, build_binary):
  writer = build_binary("tests", "write_hostile_capture")
  logdir = str(tmp_path_factory.mktemp("logdir"))
  proc = subprocess.run([writer, logdir, NAME, TEXT, THREAD, KEY, request.param],
                        capture_output=True, timeout=120, check=False)
  assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
  paths = proc.stdout.decode().split()
  by_kind = {}
  for suffix in (".xplane.pb", ".pt.trace.json.gz", ".trace.json.gz"):
    found = [p for p in paths if p.endswith(suffix) and p not in by_kind.values()]
    assert len(found) == 1, f"{suffix} in {paths}"
    by_kind[suffix] = found[0]
  return by_kind


def the_marker(events, cat=None):
  found = [e for e in events if e.get("ph") == "X" and e.get("name") == fixed(NAME)
           and (cat is None or e.get("cat") == cat)]
  assert len(found) == 1, [e.get("name") for e in events if e.get("ph") == "X"]
  return found[0]


def check_args(args):
  assert args["text"] == fixed(TEXT)
  assert args[fixed(KEY)] == 7
  for key in ("nan", "inf", "minus_inf"):
    assert key in args and args[key] is None, args


def thread_names(events):
  return [e["args"]["name"] for e in events
          if e.get("ph") == "M" and e.get("name") == "thread_name"]


def test_chrome_trace_is_strict_json(files):
  with gzip.open(files[".trace.json.gz"], "rb") as f:
    trace = strict_json(f.read())
  marker = the_marker(trace["traceEvents"])
  check_args(marker["args"])
  assert fixed(THREAD) in thread_names(trace["traceEvents"])
  assert any(e.get("name") == "inner" for e in trace["traceEvents"])


def test_pytorch_trace_is_strict_json(files):
  with gzip.open(files[".pt.trace.json.gz"], "rb") as f:
    trace = strict_json(f.read())
  marker = the_marker(trace["traceEvents"], cat="user_annotation")
  check_args(marker["args"])
  assert fixed(THREAD) in thread_names(trace["traceEvents"])


def test_python_protobuf_parses_the_xspace(files):
  space = xprof_tools.xplane_classes()["XSpace"]()
  with open(files[".xplane.pb"], "rb") as f:
    space.ParseFromString(f.read())  # Raises on bad UTF-8 in string fields.
  host = [p for p in space.planes if p.name == "/host:CPU"]
  assert len(host) == 1
  plane = host[0]
  names = {m.name for m in plane.event_metadata.values()}
  assert fixed(NAME) in names
  stat_names = {m.name for m in plane.stat_metadata.values()}
  assert fixed(KEY) in stat_names
  # The string value is interned: a stat metadata name (ref_value).
  assert fixed(TEXT) in stat_names
  assert fixed(THREAD) in [line.name for line in plane.lines]


def test_xprof_trace_viewer_shows_the_marker(files):
  text = xprof_tools.trace_text(files[".xplane.pb"])
  trace = strict_json(text.encode("utf-8"))
  marker = the_marker(trace["traceEvents"])
  args = marker["args"]
  # xprof shows every stat as a string.
  assert args["text"] == fixed(TEXT)
  assert args[fixed(KEY)] == "7"
  # The XSpace keeps the doubles themselves; xprof prints them as text, so
  # its JSON stays strict too.
  for key in ("nan", "inf", "minus_inf"):
    assert isinstance(args.get(key), str), args
  names = [e["args"]["name"] for e in trace["traceEvents"]
           if e.get("ph") == "M" and e.get("name") == "thread_name"]
  assert fixed(THREAD) in names
