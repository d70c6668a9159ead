#!/usr/bin/env bash
# Configures and builds Nova Studio (studio, CLI, tests) against the venv's LibTorch.
#   packaging/build.sh [BUILD_DIR]        default: build
# Extra CMake arguments: NOVA_CMAKE_ARGS="-DNOVA_BUILD_UI=OFF ..."
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build}"
venv="${NOVA_VENV:-$HOME/.local/share/nova/venv}"
python="${NOVA_PYTHON:-$venv/bin/python}"
torch_prefix="$("$python" -c 'import torch;print(torch.utils.cmake_prefix_path)')"
if [ ! -f "$build/build.ninja" ]; then
  # shellcheck disable=SC2086
  cmake -S . -B "$build" -G Ninja -DCMAKE_PREFIX_PATH="$torch_prefix" ${NOVA_CMAKE_ARGS:-} >"$build.configure.log" 2>&1 \
    || { cat "$build.configure.log"; exit 1; }
  grep -A200 "enabled features" "$build.configure.log" | grep -B200 -m1 "^-- Configuring done" | grep -v "^-- " || true
fi
cmake --build "$build" -j "$(nproc)"
