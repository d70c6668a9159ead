#!/usr/bin/env bash
# The GPU-server recipe: builds the headless engine (nova_core, nova, the tests; no Qt) with the
# LibTorch of the server's python3, runs every GPU test, and prints `nova doctor`.
#
#   packaging/gpu-server.sh [BUILD_DIR]          (default: build-headless)
#   NOVA_SKIP_TESTS=1 packaging/gpu-server.sh    (build only)
#   NOVA_CTEST_JOBS=4, NOVA_CTEST_SKIP=REGEX ...  (GPU tests at a time, tests left out: packaging/gpu-ctest.sh)
#
# Servers without the small dev packages (SQLite headers, CLI11, dtl, libcurl headers) can take them as Debian
# .deb files in .carry/debs (packaging/fetch-server-debs.sh fetches them on a machine with apt);
# they are unpacked into a private prefix, nothing is installed system-wide.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:-build-headless}"
python="${NOVA_PYTHON:-python3}"
torch_prefix="$("$python" -c 'import torch;print(torch.utils.cmake_prefix_path)')"
prefix="$torch_prefix"
extra=()

if [ -d .carry/debs ] && ls .carry/debs/*.deb >/dev/null 2>&1; then
  deps="${NOVA_DEPS_PREFIX:-/tmp/nova-deps}"
  mkdir -p "$deps"
  for deb in .carry/debs/*.deb; do dpkg -x "$deb" "$deps"; done
  prefix="$prefix;$deps/usr"
  # dtl and CLI11 are header-only; SQLite needs only its header beside the server's libsqlite3.so.0.
  if [ ! -f /usr/include/sqlite3.h ] && [ -f "$deps/usr/include/sqlite3.h" ]; then
    lib=$(ls /usr/lib/x86_64-linux-gnu/libsqlite3.so.0 2>/dev/null || true)
    [ -n "$lib" ] || lib="$deps/usr/lib/x86_64-linux-gnu/libsqlite3.a"
    extra+=(-DSQLite3_INCLUDE_DIR="$deps/usr/include" -DSQLite3_LIBRARY="$lib")
  fi
  # libcurl (the LLM client): always the server's shared libcurl (the .deb's static libcurl.a needs
  # OpenSSL and GSSAPI archives a server lacks), with its headers, or the .deb's where it has none.
  rm -f "$deps"/usr/lib/x86_64-linux-gnu/libcurl.a
  lib=$(ls /usr/lib/x86_64-linux-gnu/libcurl.so /usr/lib/x86_64-linux-gnu/libcurl.so.4 2>/dev/null | head -1 || true)
  if [ -f /usr/include/x86_64-linux-gnu/curl/curl.h ] || [ -f /usr/include/curl/curl.h ]; then
    inc=/usr/include; [ -f /usr/include/x86_64-linux-gnu/curl/curl.h ] && inc=/usr/include/x86_64-linux-gnu
  else
    inc="$deps/usr/include/x86_64-linux-gnu"
  fi
  [ -n "$lib" ] && extra+=(-DCURL_INCLUDE_DIR="$inc" -DCURL_LIBRARY="$lib")
  extra+=(-DCMAKE_INCLUDE_PATH="$deps/usr/include")
fi

cmake -S . -B "$build" -G Ninja -DNOVA_BUILD_UI=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_PREFIX_PATH="$prefix" "${extra[@]}"
cmake --build "$build" -j "$(nproc)"
[ "${NOVA_SKIP_TESTS:-0}" = 1 ] && exit 0  # build only (the caller runs what it needs)
# The GPU tests profile the shared examples (../shared/examples beside the clone). A server without
# ../shared gets them as a copy in .carry/shared; without either, those tests fail or skip and say so.
if [ -z "${NOVA_SHARED:-}" ] && [ ! -d ../shared/examples ] && [ -d .carry/shared/examples ]; then
  export NOVA_SHARED="$PWD/.carry/shared"
fi
# NOVA_CTEST_JOBS / NOVA_CTEST_SKIP: how many tests at a time, which left out (packaging/gpu-session.sh
# leaves the turnaround test, a timing test, for later, when nothing else runs on the box).
packaging/gpu-ctest.sh "$build"
"$build/app/nova" doctor --python "$python"
