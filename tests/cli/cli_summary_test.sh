#!/usr/bin/env bash
# `neuronprof summary` on generated captures, as users run it:
#   cli_summary_test.sh NEURONPROF_BINARY WRITE_OPERATOR_XPLANE_BINARY
# A logdir picks its newest run, a run folder its host, a file itself; the
# table, time share and steps are printed; --csv writes the table; bad input
# exits 1 and usage errors 2, each with a message.
set -u
CLI=$1
WRITER=$2
source "$(dirname "$0")/cli_test_lib.sh"
cli_test_begin summary

LOGDIR=$WORK/logs
OLD=$LOGDIR/plugins/profile/2026_01_01_00_00_00
NEW=$LOGDIR/plugins/profile/2026_01_02_00_00_00
mkdir -p "$OLD" "$NEW"
"$WRITER" "$OLD" oldhost --steps 2 >/dev/null || { echo "FAIL: writer"; exit 1; }
"$WRITER" "$NEW" host --steps 3 --device >/dev/null || { echo "FAIL: writer"; exit 1; }
touch -d '2026-01-01 00:00:00' "$OLD"

# addmm per step: 2*64*128*784 = 12845056 FLOPs, 634880 bytes; 3 steps.
if run 0 "logdir" summary "$LOGDIR"; then
  head -1 "$WORK/out" | grep -qxF "$NEW/host.xplane.pb" && pass "logdir picks the newest run" ||
    fail "logdir picked $(head -1 "$WORK/out")"
  has "table row" "$WORK/out" "aten::addmm       M=64,N=128,K=784,Float     3"
  has "table FLOPs" "$WORK/out" "38.54M"
  has "unknown op counted" "$WORK/out" "3 calls have an unknown cost"
  has "time share" "$WORK/out" "Time share by framework op"
  has "steps" "$WORK/out" "train 2"
  has "device columns" "$WORK/out" "Device busy"
fi
run 0 "run folder" summary "$NEW" && has "run folder" "$WORK/out" "$NEW/host.xplane.pb"
run 0 "file" summary "$OLD/oldhost.xplane.pb" --top=2 &&
  has "--top folds rows" "$WORK/out" "more rows (--top N, --csv)"

if run 0 "csv file" summary "$NEW/host.xplane.pb" --csv "$WORK/ops.csv"; then
  head -1 "$WORK/ops.csv" | grep -q '^layer,direction,op,params,calls,total_us,self_us,flops,bytes,' &&
    pass "csv header" || fail "csv header: $(head -1 "$WORK/ops.csv")"
  has "csv addmm row" "$WORK/ops.csv" 'fc1,fprop,aten::addmm,"M=64,N=128,K=784,Float",3,267.000,267.000,38535168,1904640,'
  has "csv unknown row" "$WORK/ops.csv" ',,,unknown,3'
  has "csv path reported" "$WORK/out" "wrote $WORK/ops.csv"
fi
if run 0 "csv stdout" summary "$NEW" --csv -; then
  head -1 "$WORK/out" | grep -q '^layer,direction,op,' && ! grep -q "Time share" "$WORK/out" &&
    pass "--csv - prints only CSV" || fail "--csv - printed: $(head -3 "$WORK/out")"
fi

# Bad input: exit 1 and a message naming the problem.
run 1 "missing path" summary "$WORK/nope" && has "missing path message" "$WORK/err" "does not exist"
: >"$WORK/empty.xplane.pb"
run 1 "empty file" summary "$WORK/empty.xplane.pb" && has "empty file message" "$WORK/err" "empty file: not an XSpace"
printf '\377\377\377\377' >"$WORK/bad.xplane.pb"
run 1 "corrupt file" summary "$WORK/bad.xplane.pb" && has "corrupt message" "$WORK/err" "is not an XSpace"
mkdir -p "$WORK/emptydir"
run 1 "folder without captures" summary "$WORK/emptydir" && has "empty folder message" "$WORK/err" "no .xplane.pb file"
"$WRITER" "$NEW" second --steps 1 >/dev/null
run 0 "two hosts" summary "$NEW" && has "two hosts: one section each" "$WORK/out" "2 hosts (host, second), one section each"
run 1 "unknown host" summary "$NEW" --host nobody && has "unknown host message" "$WORK/err" "hosts: host, second"
run 0 "--host" summary "$NEW" --host second && has "--host picks" "$WORK/out" "$NEW/second.xplane.pb"

# Usage errors: exit 2, one line naming the option, then where the usage is.
usage_error() {
  local what=$1 text=$2
  shift 2
  run 2 "$what" "$@" && has "$what message" "$WORK/err" "$text" &&
    has "$what usage hint" "$WORK/err" "usage: neuronprof"
}
usage_error "no input" "summary needs a logdir (its newest run), a run folder" summary
usage_error "bad --top" "--top: Value x not in range 0 to" summary "$NEW" --top x
usage_error "negative --top" "--top: Value -1 not in range 0 to" summary "$NEW" --top=-1
usage_error "--top without value" "--top needs a value" summary "$NEW" --top
usage_error "empty --csv" "--csv: needs a path or '-'" summary "$NEW" --csv ""
usage_error "unknown flag" "unknown option '--bogus'" summary "$NEW" --bogus
usage_error "two inputs" "unexpected argument '$OLD'" summary "$NEW" "$OLD"
usage_error "convert --format" "--format: foo not in {chrome,kineto}" \
  convert "$NEW/host.xplane.pb" --format foo
usage_error "convert -o without value" "-o,--out needs a value" convert "$NEW/host.xplane.pb" -o
usage_error "info without file" "info needs a logdir (its newest run), a run folder" info
usage_error "info, two files" "unexpected argument" info "$NEW/host.xplane.pb" "$OLD"
[[ -e $NEW/host.trace.json.gz ]] && fail "a usage error converted" || pass "usage errors write nothing"

# Help: generated, on stdout, exit 0.
help_has() { has "$1" "$WORK/out" "$2"; [[ -s $WORK/err ]] && fail "$1: stderr: $(cat "$WORK/err")"; }
run 0 "--help" --help && help_has "--help lists summary" \
  "summary                     operator table (PyProf columns)"
run 0 "help" help && help_has "help lists convert" "convert                     write a Chrome"
run 0 "summary --help" summary --help && help_has "summary --help" "--top N:NONNEGATIVE=20"
run 0 "convert --help" convert --help && help_has "convert --help" "-o,--out OUT"
run 0 "info --help" info --help && help_has "info --help" "Usage: neuronprof info [OPTIONS] input"
run 0 "--version" --version && help_has "--version" "neuronprof 0.1.0"
run 0 "version" version && help_has "version" "neuronprof 0.1.0"

cli_test_end
