# Shared by the CLI test scripts (source it after `set -u`): a scratch
# folder removed on exit, pass/fail counting and the final verdict.
#   cli_test_begin NAME      # sets WORK
#   fail "what went wrong" / pass "what held"
#   has / hasnt DESCRIPTION FILE TEXT   # FILE holds (lacks) TEXT, fixed string
#   cli_test_end             # exit status 1 if anything failed
cli_test_begin() {
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/neuronprof_$1_XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
  failures=0
}

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

has() { grep -qF -- "$3" "$2" && pass "$1" || fail "$1: '$3' not in $(cat "$2")"; }
hasnt() { grep -qF -- "$3" "$2" && fail "$1: '$3' printed" || pass "$1"; }

cli_test_end() {
  echo "$failures failure(s)"
  [[ $failures -eq 0 ]]
}
