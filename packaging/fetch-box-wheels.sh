#!/usr/bin/env bash
# The Python packages the GPU box lacks and a device call brings (the box has no network), as wheels for
# its Python (default 3.12) into DIR (default .whl, git-ignored, named in a device call's carry):
#   - pytest and its dependencies, for the client's package tests in a fresh venv (packaging/deliver-gpu.sh
#     installs them with --find-links);
#   - kernelguard, the LLM search's second static check (packaging/gpu-session.sh installs it into the box's
#     python3 when missing; without it every LLM candidate's result says "kernelguard not run").
# Versions from packaging/requirements.txt where it names them.
#   packaging/fetch-box-wheels.sh [PYTHON_VERSION] [DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
pyver="${1:-3.12}"
dir="${2:-.whl}"
pin() { grep -m1 "^$1==" packaging/requirements.txt || true; }
kernelguard=$(pin kernelguard)
pytest=$(pin pytest)
[ -n "$kernelguard" ] || { echo "packaging/requirements.txt names no kernelguard version" >&2; exit 2; }
mkdir -p "$dir"
# Pure-Python wheels; pytest's dependencies come with it (no --no-deps), kernelguard needs none.
python3 -m pip download --quiet --only-binary=:all: --python-version "$pyver" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d "$dir" "${pytest:-pytest}"
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version "$pyver" --implementation cp \
  --platform manylinux_2_28_x86_64 -d "$dir" "$kernelguard"
ls "$dir"
