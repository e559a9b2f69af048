#!/usr/bin/env bash
# Installs what neuronprof needs on Debian 12: the build dependencies from
# Debian, and (with --python) a virtualenv at .venv with the pinned interop
# test tools from PyPI. Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

DEBIAN_PACKAGES=(cmake g++ make pkg-config zlib1g-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libfmt-dev catch2 libbenchmark-dev
  libcli11-dev   # the neuronprof CLI's argument parser (header-only)
  libdw-dev      # symbolizes recorded call stacks (function, file:line)
  libunwind-dev  # takes call stacks at record time (NEURONPROF_SCOPE_STACK, record_stacks)
  libisal-dev # igzip compresses the .json.gz traces (a third of libdeflate's time at level 1)
  libtorch-dev   # neuronprof::torch, examples/libtorch_mlp
  python3-torch  # torch.profiler on the same libtorch: tests/interop/test_torch_profiler_agreement.py
  libgloo-dev    # c10d's ProcessGroupGloo.hpp: the collectives test
  faketime       # libfaketime: a capture server whose clock is skewed (capture_client_test)
  clang-14 libclang-rt-14-dev  # libFuzzer targets (tests/fuzz, scripts/test.sh)
  clang-format-14)  # tools/format.sh, and the ctest `format` that checks the tree
# Debian's own python3 needs python3-venv for `python3 -m venv`.
if [ "${1:-}" = "--python" ] && ! python3 -m venv --help >/dev/null 2>&1; then
  DEBIAN_PACKAGES+=(python3-venv)
fi

missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "== installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ "${1:-}" = "--python" ]; then
  if [ ! -x .venv/bin/python ]; then
    echo "== creating .venv"
    python3 -m venv .venv
  fi
  requirements=(tests/interop/requirements.txt tests/interop/requirements-nodeps.txt)
  if ! cat "${requirements[@]}" | cmp -s - .venv/.requirements.installed; then
    echo "== installing pinned Python test tools into .venv"
    .venv/bin/pip install -q --disable-pip-version-check -r tests/interop/requirements.txt
    # Packages whose declared dependencies the tests do not need (see the file).
    .venv/bin/pip install -q --disable-pip-version-check --no-deps \
      -r tests/interop/requirements-nodeps.txt
    cat "${requirements[@]}" >.venv/.requirements.installed
  fi
fi
