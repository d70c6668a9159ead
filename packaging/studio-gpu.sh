#!/usr/bin/env bash
# The studio's GPU tests on a GPU box that has no Qt: unpacks the kit packaging/studio-kit.sh made on
# a machine with Qt (.carry/studio/kit.tar.xz: nova_ui_gpu_tests with its Qt, fonts and the offscreen
# platform), checks that every library it needs is found here, then runs StudioGpu.* from the repository
# root: the Profile action and the LLM search (Send to LLM against the scripted loopback server of
# tests/support/llm_server, the LLM's kernels in bubblewrap: the caller puts bwrap on PATH, which is kept;
# where it cannot start, the test says so and runs them with the project's consent), over the real studio
# session with this checkout's resources/, kernels/ and tests/fixtures/, the worker Python ($NOVA_PYTHON,
# else python3) and the tracer of the headless build in BUILD_DIR (packaging/gpu-server.sh; without one,
# the tracer that came with the kit, .carry/studio/nova/libnova_tracer.so). The
# Profile test runs first (the cheaper one), then the LLM search, each a run of the binary.
# The tests' output goes to stdout; their screenshots to OUT_DIR/studio-gpu/, their projects (settings,
# trace, LLM records) to OUT_DIR/scratch/, their results to OUT_DIR/studio-gpu-{Profile,Llm}.xml. The
# exit status is the first failing run's, else 0.
#   packaging/studio-gpu.sh BUILD_DIR OUT_DIR
#   NOVA_STUDIO_KIT=FILE   another kit (default .carry/studio/kit.tar.xz)
#   NOVA_SHARED=DIR        the shared examples (default .carry/shared; the tests open examples/mlp_block.py
#                          and examples/matmul_scaling_residual_add.py)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
[ $# -eq 2 ] || { sed -n 2,17p "$0"; exit 2; }
build=$(realpath -m "$1")
out=$(realpath -m "$2")
kit_file="${NOVA_STUDIO_KIT:-.carry/studio/kit.tar.xz}"
[ -f "$kit_file" ] || { echo "no studio kit at $kit_file (packaging/studio-kit.sh makes it)"; exit 2; }
# The CUPTI tracer: the headless build's where BUILD_DIR has one, else the kit's (built with the studio).
plugins="$build/lib"
[ -f "$plugins/libnova_tracer.so" ] || plugins="$(realpath -m "$(dirname "$kit_file")")/nova"
[ -f "$plugins/libnova_tracer.so" ] || { echo "no tracer in $build/lib or $plugins (packaging/gpu-server.sh, packaging/studio-kit.sh)"; exit 2; }
echo "== the tracer: $plugins/libnova_tracer.so"
shared="${NOVA_SHARED:-$PWD/.carry/shared}"
for example in mlp_block matmul_scaling_residual_add; do
  [ -f "$shared/examples/$example.py" ] || { echo "no $shared/examples/$example.py (set NOVA_SHARED)"; exit 2; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# With xz where the box has it, else with Python's lzma (a minimal system has no xz).
if command -v xz >/dev/null; then
  tar -C "$tmp" -xJf "$kit_file"
else
  "${NOVA_PYTHON:-python3}" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$kit_file" "$tmp"
fi || { echo "cannot unpack $kit_file"; exit 2; }
kit="$tmp/kit"
binary="$kit/bin/nova_ui_gpu_tests"

# Every library from the kit (its DT_RPATH) or this box (glibc, libstdc++, CUDA, libcurl).
echo "== libraries of $binary"
ldd "$binary" "$kit/plugins/platforms/libqoffscreen.so" "$kit"/lib/graphviz/*.so.6 > "$tmp/ldd.txt" 2>&1
grep -v " => $kit/" "$tmp/ldd.txt"
echo "($(grep -c " => $kit/" "$tmp/ldd.txt") resolved from the kit)"
if grep -q "not found" "$tmp/ldd.txt"; then
  echo "FAILED: this box lacks libraries the kit does not bring:"
  grep "not found" "$tmp/ldd.txt" | sort -u
  exit 2
fi

# Nothing the tests touch may point at the build machine's folders: the resources, kernels, tracer,
# examples, fixtures (the scripted LLM server beside them) and output folders all come from here. (Qt
# reads bin/qt.conf too: plugins from the kit.) PATH stays the caller's: bwrap and python3 are found on it.
mkdir -p "$out"
# The profile test first (the cheaper one), then the LLM search; a result file each.
rc=0
for t in Profile Llm; do
  case $t in Profile) filter='StudioGpu.Profile*' ;; Llm) filter='StudioGpu.SendAGroupToTheLlm*' ;; esac
  env QT_QPA_PLATFORM=offscreen QT_PLUGIN_PATH="$kit/plugins" FONTCONFIG_FILE="$kit/fonts.conf" \
    GVBINDIR="$kit/lib/graphviz" \
    NOVA_PLUGIN_DIR="$plugins" NOVA_RESOURCES="$PWD/resources" NOVA_KERNELS="$PWD/kernels" \
    NOVA_SHARED="$shared" NOVA_TEST_FIXTURES="$PWD/tests/fixtures" NOVA_TEST_OUTPUT="$out" NOVA_PYTHON="${NOVA_PYTHON:-python3}" \
    "$binary" --gtest_filter="$filter" --gtest_output="xml:$out/studio-gpu-$t.xml"
  r=$?
  echo "== $filter: exit status $r"
  [ $r = 0 ] || rc=$r
done
echo "== nova_ui_gpu_tests exit status $rc; screenshots in $out/studio-gpu"
grep -q 'result="skipped"' "$out"/studio-gpu-*.xml 2>/dev/null && echo "NOTE: the tests were skipped (no CUDA device found): nothing was profiled or searched"
exit $rc
