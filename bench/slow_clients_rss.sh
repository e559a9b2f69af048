#!/bin/bash
# RSS of a flight-recorder process serving 10 clients that never read their
# responses, then 8 sequential pulls (docs/PERFORMANCE.md). Loopback only.
# usage: bench/slow_clients_rss.sh [build dir, default build] [quick]
# quick (bench/perf_table.sh --quick): 2 clients that do not read, shorter
# waits and 2 pulls; its figures only show that the steps run.
set -u
PROBE=${1:-build}/bench/slow_clients_probe
CLIENTS=10 HOLD=6 SETTLE=5 AFTER=3 PULLS=8 LAST=2
if [ "${2:-}" = quick ]; then CLIENTS=2 HOLD=1 SETTLE=0.5 AFTER=0.5 PULLS=2 LAST=0.5; fi
OUT=$(mktemp -d)
trap 'kill $SERVER 2>/dev/null; rm -rf "$OUT"' EXIT
"$PROBE" server "$OUT/port" 120 > "$OUT/rss" 2>/dev/null &
SERVER=$!
for _ in $(seq 600); do [ -s "$OUT/port" ] && break; sleep 0.1; done
PORT=$(cat "$OUT/port")
sleep 1; echo "ring filled: $(tail -1 "$OUT/rss") MB"
"$PROBE" unread "$PORT" "$CLIENTS" "$HOLD" 2>/dev/null &
UNREAD=$!
sleep "$SETTLE"; echo "$CLIENTS clients that do not read: $(tail -1 "$OUT/rss") MB"
wait $UNREAD; sleep "$AFTER"; echo "after they went: $(tail -1 "$OUT/rss") MB"
"$PROBE" pull "$PORT" "$PULLS" 2>/dev/null | tail -1
sleep "$LAST"; echo "after $PULLS sequential pulls: $(tail -1 "$OUT/rss") MB"
echo "peak: $(sort -n "$OUT/rss" | tail -1) MB"
