#!/bin/bash
# RSS of a flight-recorder process serving 10 clients that never read their
# responses, then 8 sequential pulls (docs/PERFORMANCE.md). Loopback only.
# usage: bench/slow_clients_rss.sh [build dir, default build]
set -u
PROBE=${1:-build}/bench/slow_clients_probe
OUT=$(mktemp -d)
trap 'kill $SERVER 2>/dev/null; rm -rf "$OUT"' EXIT
"$PROBE" server "$OUT/port" 120 > "$OUT/rss" 2>/dev/null &
SERVER=$!
for _ in $(seq 600); do [ -s "$OUT/port" ] && break; sleep 0.1; done
PORT=$(cat "$OUT/port")
sleep 1; echo "ring filled: $(tail -1 "$OUT/rss") MB"
"$PROBE" unread "$PORT" 10 6 2>/dev/null &
UNREAD=$!
sleep 5; echo "10 clients that do not read: $(tail -1 "$OUT/rss") MB"
wait $UNREAD; sleep 3; echo "after they went: $(tail -1 "$OUT/rss") MB"
"$PROBE" pull "$PORT" 8 2>/dev/null | tail -1
sleep 2; echo "after 8 sequential pulls: $(tail -1 "$OUT/rss") MB"
echo "peak: $(sort -n "$OUT/rss" | tail -1) MB"
