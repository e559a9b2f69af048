#!/usr/bin/env bash
# Always-on cost (issue 23, "Costs"): examples/inference_server at
# saturation with a FlightRecorder recording every marker, flow, counter,
# instant and async span (--recorder flight) against the same server with
# no recorder (--recorder none).
#
# Saturation: a closed loop (--concurrency C requests in flight at all
# times, a new one as each answer arrives), so the workers never wait for
# work and throughput is the server's capacity; the latency is then the
# queue's (Little's law), and its p99 moves with every cost the recorder
# adds. The two variants run in turn, ROUNDS times, the order swapped each
# round (A B, B A, ...); printed: each run, then the medians of throughput
# and p99 and their ratios flight / none (goal: throughput >= 0.99, p99
# <= 1.02), and the process CPU time per request of each until the last
# answer. The flight recorder's dump runs after all three are measured.
#
#   bench/serving_always_on.sh [SERVER] [ROUNDS] [REQUESTS] [CONCURRENCY] [-- SERVER_ARGS...]
#   bench/serving_always_on.sh build/examples/inference_server 11 10000 64
set -euo pipefail
SERVER=${1:-build/examples/inference_server}
ROUNDS=${2:-11}
REQUESTS=${3:-10000}
CONCURRENCY=${4:-64}
shift $(( $# < 4 ? $# : 4 ))
[[ "${1:-}" == "--" ]] && shift
EXTRA=("$@")
[[ -x "$SERVER" ]] || { echo "serving_always_on: $SERVER is not built" >&2; exit 2; }
LOGS=$(mktemp -d)
trap 'rm -rf "$LOGS"' EXIT

declare -A THROUGHPUT P99 CPU
run() {  # VARIANT
  local out
  out=$("$SERVER" --recorder "$1" --logdir "$LOGS/$1" --requests "$REQUESTS" \
        --concurrency "$CONCURRENCY" "${EXTRA[@]}")
  # The process's CPU time per request until the last answer (client and
  # server, not the dump): less sensitive than wall time to other programs
  # on a shared machine.
  CPU[$1]+="$(sed -n 's/.*(\([0-9.]*\) us per request).*/\1/p' <<<"$out") "
  THROUGHPUT[$1]+="$(sed -n 's/.*s: \([0-9.]*\) requests\/s.*/\1/p' <<<"$out") "
  P99[$1]+="$(sed -n 's/.* p99 \([0-9.]*\) ms.*/\1/p' <<<"$out") "
  rm -rf "$LOGS/$1"
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

echo "serving_always_on: $SERVER, $ROUNDS rounds of $REQUESTS requests, closed loop of" \
     "$CONCURRENCY in flight ${EXTRA[*]}"
for (( r = 0; r < ROUNDS; ++r )); do
  if (( r % 2 == 0 )); then run none; run flight; else run flight; run none; fi
done
for v in none flight; do
  echo "$v: requests/s ${THROUGHPUT[$v]}"
  echo "$v: p99 ms ${P99[$v]}"
  echo "$v: CPU us per request ${CPU[$v]}"
done
CN=$(median <<<"${CPU[none]}"); CF=$(median <<<"${CPU[flight]}")
TN=$(median <<<"${THROUGHPUT[none]}"); TF=$(median <<<"${THROUGHPUT[flight]}")
PN=$(median <<<"${P99[none]}"); PF=$(median <<<"${P99[flight]}")
awk -v tn="$TN" -v tf="$TF" -v pn="$PN" -v pf="$PF" -v cn="$CN" -v cf="$CF" 'BEGIN {
  printf "median requests/s: none %.0f, flight %.0f, flight/none %.4f (goal >= 0.99)\n", tn, tf, tf / tn
  printf "median p99: none %.3f ms, flight %.3f ms, flight/none %.4f (goal <= 1.02)\n", pn, pf, pf / pn
  printf "median CPU per request: none %.1f us, flight %.1f us, flight/none %.4f\n", cn, cf, cf / cn
}'
