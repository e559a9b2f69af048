#!/usr/bin/env bash
# Formats every C++ file git tracks with the repository's .clang-format
# (clang-format 14, Debian's clang-format-14). `--check` lists the files
# that would change and exits 1 if any would, changing nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
format=$(command -v clang-format-14 || command -v clang-format) ||
  { echo "format.sh: clang-format-14 is not installed (apt-get install clang-format-14)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu' | grep -v '^tests/tools/layering_fixture/')
if [[ "${1:-}" == "--check" ]]; then
  changed=0
  for f in "${files[@]}"; do
    "$format" --style=file "$f" | cmp -s - "$f" || { echo "$f"; changed=1; }
  done
  exit "$changed"
fi
"$format" --style=file -i "${files[@]}"
