#!/usr/bin/env bash
# docs/PERFORMANCE.md's first table, measured in one run (bench/perf_table.py):
#   bash bench/perf_table.sh [BUILD_DIR] [--quick] [--soak_seconds N] [--check] > table.md
exec python3 "$(dirname "$0")/perf_table.py" "$@"
