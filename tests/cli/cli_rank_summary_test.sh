#!/usr/bin/env bash
# `neuronprof summary` on a run folder holding the ranks of one distributed
# job (tests/analysis/rank_space.h, written by write_rank_xplanes):
#   cli_rank_summary_test.sh NEURONPROF_BINARY WRITE_RANK_XPLANES_BINARY
# The multi-rank report (straggler, per rank and step, collectives) and its
# CSVs; --host still gives one rank's report; each rank's capture warnings
# head the report; a missing rank is named; ranks
# of different world sizes, a rank twice and captures that do not overlap
# in time exit 1 with a message naming them.
set -u
CLI=$1
WRITER=$2
source "$(dirname "$0")/cli_test_lib.sh"
cli_test_begin rank_summary

# write NAME WRITER_ARGS...: a run folder $WORK/NAME.
write() {
  local name=$1
  shift
  mkdir -p "$WORK/$name"
  "$WRITER" "$WORK/$name" "$@" >/dev/null || fail "writer $name $*"
}

write job
if run 0 "four ranks" summary "$WORK/job"; then
  has "job line" "$WORK/out" "Distributed job: 4 ranks of world size 4, backend gloo"
  has "straggler named" "$WORK/out" \
    "Straggler: rank 3, last to arrive in 3 of 3 collectives; the other ranks lost 0.900 ms waiting for it"
  # rank, steps, step time, compute, comm, overlap, idle/wait, waited, last in, caused
  has "rank 0 row" "$WORK/out" "0     3     1.000   0.540 0.300   0.150     0.310  0.300       0  0.000 node_rank0.xplane.pb"
  has "rank 3 row" "$WORK/out" "3     3     1.000   0.640 0.200   0.150     0.310  0.000       3  0.900 node_rank3.xplane.pb"
  has "step row" "$WORK/out" "train 2    1 1.000   0.540 0.300   0.150     0.310  0.100"
  has "collectives row" "$WORK/out" "gloo:all_reduce   4.00 MiB     3    0.810   0.270      0.900 15.53 23.30"
  hasnt "nothing missing" "$WORK/out" "MISSING"
fi
if run 0 "csv files" summary "$WORK/job" --csv "$WORK/steps.csv" --collectives_csv "$WORK/coll.csv"; then
  has "steps csv header" "$WORK/steps.csv" "rank,step,name,start_us,step_us,compute_us,comm_us,overlap_us,idle_us,waited_us"
  has "steps csv row" "$WORK/steps.csv" "3,2,train,2000.000,1000.000,640.000,200.000,150.000,310.000,0.000"
  [[ $(wc -l <"$WORK/steps.csv") -eq 13 ]] && pass "every rank's every step" ||
    fail "steps csv has $(wc -l <"$WORK/steps.csv") lines"
  has "collectives csv row" "$WORK/coll.csv" "gloo:all_reduce,all_reduce,3,4194304,810.000,270.000,900.000,15.534,23.302"
  has "csv paths reported" "$WORK/out" "wrote $WORK/coll.csv"
fi
# A step range applies to every rank.
if run 0 "--steps on ranks" summary "$WORK/job" --steps 1-1 --csv -; then
  [[ $(wc -l <"$WORK/out") -eq 5 && $(cut -d, -f2 "$WORK/out" | sort -u | tr '\n' ' ') == "1 step " ]] &&
    pass "each rank's step 1 only" || fail "--steps 1-1 gave: $(cat "$WORK/out")"
fi
run 1 "rank-only tables" summary "$WORK/job" --json - &&
  has "rank-only tables message" "$WORK/err" "apply to one rank's report (add --host NAME)"
if run 0 "csv stdout" summary "$WORK/job" --csv -; then
  head -1 "$WORK/out" | grep -q '^rank,step,name,' && ! grep -q "Straggler" "$WORK/out" &&
    pass "--csv - prints only CSV" || fail "--csv - printed: $(head -3 "$WORK/out")"
fi
run 0 "--host" summary "$WORK/job" --host node_rank1 &&
  has "--host gives one rank's report" "$WORK/out" "$WORK/job/node_rank1.xplane.pb" &&
  hasnt "--host: no multi-rank report" "$WORK/out" "Straggler"

# A rank that died (no file): named, the others still reported.
write died --ranks 0,1,3
if run 0 "missing rank" summary "$WORK/died"; then
  has "missing rank named" "$WORK/out" "MISSING: rank 2 of world size 4 has no file in this run"
  has "others reported" "$WORK/out" "node_rank3.xplane.pb"
fi

# What a rank's capture lost heads the report, named by its file; --json of
# that rank carries it too.
write lost --warning 1
if run 0 "a rank's warning" summary "$WORK/lost"; then
  has "warning named by file" "$WORK/out" "warning: node_rank1.xplane.pb: ms_duration=50 ended the window at 50 ms"
  [[ $(grep -c "^warning: " "$WORK/out") -eq 1 ]] &&
    [[ $(grep -n "^warning: " "$WORK/out" | cut -d: -f1) -lt $(grep -n "^Straggler" "$WORK/out" | cut -d: -f1) ]] &&
    pass "one warning, before the report" || fail "warning lines: $(cat "$WORK/out")"
fi
run 0 "job without warnings" summary "$WORK/job" && hasnt "no warning line" "$WORK/out" "warning:"
run 0 "--json of the rank" summary "$WORK/lost" --host node_rank1 --json - &&
  has "json warnings key" "$WORK/out" '"warnings":["ms_duration=50 ended the window at 50 ms"]'

write alone --ranks 2
run 0 "one rank of four" summary "$WORK/alone" &&
  has "one rank's report" "$WORK/out" "$WORK/alone/node_rank2.xplane.pb" &&
  has "the others named" "$WORK/out" "MISSING: this run holds only rank 2 of world size 4: ranks 0, 1, 3 have no file"

# A file may claim any world size: its missing ranks are one range, not
# 2^31 numbers in memory and on the terminal (issue 27).
write claims --ranks 0 --world_size 2147483647
run 0 "one rank of 2^31-1" summary "$WORK/claims" &&
  has "the others as a range" "$WORK/out" "MISSING: this run holds only rank 0 of world size 2147483647: ranks 1-2147483646 have no file"

# Not one job's ranks: exit 1, a message naming the files or ranks.
write sizes --world_size_of 2:8
run 1 "world sizes" summary "$WORK/sizes" &&
  has "world sizes message" "$WORK/err" "world sizes differ" &&
  has "world sizes listed" "$WORK/err" "node_rank2.xplane.pb: rank 2 of world size 8"
write twice --duplicate 1
run 1 "one rank twice" summary "$WORK/twice" &&
  has "duplicate message" "$WORK/err" "rank 1 is in two files: node_rank1.xplane.pb and other_rank1.xplane.pb"
write apart --shift 3:60
run 1 "windows apart" summary "$WORK/apart" &&
  has "windows message" "$WORK/err" "the ranks' captures do not overlap in time: rank 3 started after rank 0 had stopped" &&
  has "windows listed" "$WORK/err" "rank 3: 2025-11-25 14:01:00.000000 UTC"
run 1 "--memory_csv of ranks" summary "$WORK/job" --memory_csv - &&
  has "--memory_csv message" "$WORK/err" "add --host NAME"
run 1 "--collectives_csv of one file" summary "$WORK/job/node_rank0.xplane.pb" --collectives_csv - &&
  has "--collectives_csv message" "$WORK/err" "applies to a run of several ranks"
run 0 "--help" summary --help && has "--help names the option" "$WORK/out" "--collectives_csv"

cli_test_end
