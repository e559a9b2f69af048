#!/usr/bin/env bash
# Output a capture cannot forge: a crafted .xplane.pb whose host, plane,
# thread, event and stat names, stat values and warnings hold escape
# sequences (retitle, clear screen, carriage return over a fake line, a C1
# CSI, DEL, a line break) is shown by `info` and `summary` with those bytes
# escaped (\x1b, \u009b ...), never raw; so is an error naming such a file.
#   cli_terminal_text_test.sh NEURONPROF_BINARY WRITE_WORST_CAPTURE_BINARY
set -u
CLI=$1
WRITER=$2
source "$(dirname "$0")/cli_test_lib.sh"
cli_test_begin terminal_text

# raw_free DESCRIPTION FILE: FILE holds no C0 control but the line break,
# no DEL and no C1 control (UTF-8 C2 80..9F).
raw_free() {
  if LC_ALL=C grep -qP '[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$2"; then
    fail "$1: raw control characters: $(LC_ALL=C grep -naP '[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$2" | head -3 | od -c | head -5)"
  else
    pass "$1"
  fi
}

# no_forged_line DESCRIPTION FILE: the names' "fake" never starts a line.
no_forged_line() {
  if grep -q '^fake' "$2"; then fail "$1: $(grep -n '^fake' "$2" | head -3)"; else pass "$1"; fi
}

capture="$WORK/forged.xplane.pb"
"$WRITER" escapes 0 "$capture" || fail "writing the crafted capture"

if run 0 "info of a forged capture" info "$capture"; then
  raw_free "info: no raw control characters" "$WORK/out"
  has "info: the host name, escaped" "$WORK/out" 'host: host\x1b]0;owned\x07\x1b[2J\x0dall good\u009b31m\x7f\x0afake'
  has "info: the thread name, escaped" "$WORK/out" 'thread\x1b]0;owned'
  has "info: the plane name, escaped" "$WORK/out" 'plane /host:plane\x1b]0;owned'
  has "info: the warning, escaped" "$WORK/out" 'warning: warning\x1b]0;owned'
  no_forged_line "info: no line of the file's making" "$WORK/out"
fi

if run 0 "summary of a forged capture" summary "$capture"; then
  raw_free "summary: no raw control characters" "$WORK/out"
  has "summary: the operator, escaped" "$WORK/out" 'aten::op\x1b]0;owned'
  has "summary: the marker, escaped" "$WORK/out" 'marker\x1b]0;owned'
  no_forged_line "summary: no line of the file's making" "$WORK/out"
fi

# An error that names the file: its name holds the sequences too.
forged_name="$WORK/"$'bad\x1b[2Jname'".xplane.pb"
printf 'not a capture' >"$forged_name"
if run 1 "summary of a corrupt file with a forged name" summary "$forged_name"; then
  raw_free "error: no raw control characters" "$WORK/err"
  has "error: the name, escaped" "$WORK/err" 'bad\x1b[2Jname'
fi

cli_test_end
