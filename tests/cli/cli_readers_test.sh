#!/usr/bin/env bash
# What `neuronprof info | convert | summary` do with input that is not a
# capture: a FIFO, /dev/zero, an empty, truncated or oversized (sparse)
# file, a directory. Each must exit 1 at once with a message naming the
# problem, never hang or read without bound.
#   cli_readers_test.sh NEURONPROF_BINARY WRITE_OPERATOR_XPLANE_BINARY
# `timeout` is only a guard so that a regression fails instead of hanging.
set -u
CLI=$1
WRITER=$2
source "$(dirname "$0")/cli_test_lib.sh"
cli_test_begin readers

# refused DESCRIPTION EXPECTED_MESSAGE ARGS...: exit 1 within the guard and
# the message on stderr.
refused() {
  local what=$1 message=$2
  shift 2
  local rc=0
  timeout 20 "$CLI" "$@" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
  if [[ $rc -eq 124 ]]; then
    fail "$what: hung (killed after 20 s)"
  elif [[ $rc -ne 1 ]]; then
    fail "$what: exit $rc, expected 1; stderr: $(head -c 300 "$WORK/err")"
  elif ! grep -qF -- "$message" "$WORK/err"; then
    fail "$what: '$message' not in stderr: $(head -c 300 "$WORK/err")"
  else
    pass "$what"
  fi
}

mkdir "$WORK/run"
"$WRITER" "$WORK/run" host --steps 2 >/dev/null || { echo "FAIL: writer"; exit 1; }
GOOD=$WORK/run/host.xplane.pb
size=$(stat -c %s "$GOOD")
head -c $((size / 2)) "$GOOD" >"$WORK/truncated.xplane.pb"
: >"$WORK/empty.xplane.pb"
mkfifo "$WORK/fifo.xplane.pb"
mkdir "$WORK/folder.xplane.pb"
# 3 GiB without using the disk: over protobuf's 2 GiB limit.
truncate -s 3G "$WORK/huge.xplane.pb"

for command in info convert summary; do
  refused "$command FIFO" "is a FIFO (named pipe), not a regular file" \
    $command "$WORK/fifo.xplane.pb"
  refused "$command /dev/zero" "is a character device, not a regular file" $command /dev/zero
  refused "$command empty file" "empty file: not an XSpace" $command "$WORK/empty.xplane.pb"
  refused "$command truncated file" "is not an XSpace (.xplane.pb) file" \
    $command "$WORK/truncated.xplane.pb"
  refused "$command 3 GiB file" "over the limit of 2147483647 bytes" \
    $command "$WORK/huge.xplane.pb"
done
refused "info empty folder" "no .xplane.pb file in" info "$WORK/folder.xplane.pb"
refused "convert empty folder" "no .xplane.pb file in" convert "$WORK/folder.xplane.pb"
[[ -e "$WORK/empty.trace.json.gz" ]] && fail "convert wrote output for an empty file" ||
  pass "convert writes nothing for an empty file"

# summary walks folders: a FIFO named like a capture in a run folder or a
# logdir's run is skipped (never opened), the real capture is read.
mkfifo "$WORK/run/other.xplane.pb"
mkdir -p "$WORK/logs/plugins/profile/run1"
cp "$GOOD" "$WORK/logs/plugins/profile/run1/host.xplane.pb"
mkfifo "$WORK/logs/plugins/profile/run1/fifo.xplane.pb"
for input in "$WORK/run" "$WORK/logs"; do
  rc=0
  timeout 20 "$CLI" summary "$input" >"$WORK/out" 2>"$WORK/err" </dev/null || rc=$?
  if [[ $rc -eq 0 ]] && grep -q "host.xplane.pb" "$WORK/out"; then
    pass "summary $(basename "$input") skips the FIFO"
  else
    fail "summary $(basename "$input") with a FIFO: exit $rc; $(head -c 300 "$WORK/err")"
  fi
done
mkdir "$WORK/fifo_only"
mkfifo "$WORK/fifo_only/host.xplane.pb"
refused "summary folder holding only a FIFO" "no .xplane.pb file" summary "$WORK/fifo_only"

# The good file still reads.
timeout 20 "$CLI" info "$GOOD" >"$WORK/out" 2>&1 && grep -q "^plane /host:CPU" "$WORK/out" &&
  pass "info reads a real capture" || fail "info on a real capture: $(head -c 300 "$WORK/out")"

cli_test_end
