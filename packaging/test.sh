#!/usr/bin/env bash
# Sets up, builds and runs every test (GPU tests skip, counted as skipped, where no GPU exists).
#   packaging/test.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build}"
packaging/setup-deps.sh
packaging/build.sh "$build"
cd "$build"
ctest --output-on-failure -j "$(nproc)" --timeout 600
