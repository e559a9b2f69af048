# Shared by the CLI test scripts (source it after `set -u`): a scratch
# folder removed on exit, pass/fail counting and the final verdict.
#   cli_test_begin NAME      # sets WORK
#   fail "what went wrong" / pass "what held"
#   has / hasnt DESCRIPTION FILE TEXT   # FILE holds (lacks) TEXT, fixed string
#   run EXPECTED_RC DESCRIPTION ARGS... # $CLI ARGS..., output in $WORK/out, $WORK/err
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

# run EXPECTED_RC DESCRIPTION ARGS...: runs $CLI; exit status checked,
# output in $WORK/out and $WORK/err. Returns 1 (and fails) on another status.
run() {
  local want=$1 what=$2
  shift 2
  local rc=0
  "$CLI" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  if [[ $rc -ne $want ]]; then
    fail "$what: exit $rc, expected $want; stdout: $(head -5 "$WORK/out"); stderr: $(cat "$WORK/err")"
    return 1
  fi
  return 0
}

cli_test_end() {
  echo "$failures failure(s)"
  [[ $failures -eq 0 ]]
}
