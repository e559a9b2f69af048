#!/usr/bin/env bash
# A flight recorder's streamed xplane.pb (fixed-width length placeholders,
# the plane's fields after its lines) reads as the XSpace built whole from
# the same records: `info` and `summary` print the same for both files.
#   cli_streamed_xplane_test.sh NEURONPROF_BINARY WRITE_STREAMED_XPLANE_BINARY
set -u
CLI=$1
WRITER=$2
source "$(dirname "$0")/cli_test_lib.sh"
cli_test_begin streamed_xplane

"$WRITER" "$WORK" host >/dev/null || { echo "FAIL: writer"; exit 1; }
cmp -s "$WORK/whole/host.xplane.pb" "$WORK/streamed/host.xplane.pb" &&
  fail "the streamed file has its own bytes (placeholders)" || pass "two encodings"

for command in info summary; do
  for kind in whole streamed; do
    run 0 "$command of the $kind file" "$command" "$WORK/$kind/host.xplane.pb" || continue
    # The file's own path and size are the only things that may differ.
    sed -e "s#$WORK/$kind#DIR#g" -e 's/[0-9][0-9,.]* \(bytes\|KB\|MB\|kB\|KiB\|MiB\)/N \1/g' \
      "$WORK/out" >"$WORK/$command.$kind"
  done
  if cmp -s "$WORK/$command.whole" "$WORK/$command.streamed"; then
    pass "$command: the same"
  else
    fail "$command differs: $(diff "$WORK/$command.whole" "$WORK/$command.streamed" | head -20)"
  fi
done
has "summary read the markers" "$WORK/summary.streamed" "layer_3"
cli_test_end
