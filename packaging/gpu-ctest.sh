#!/usr/bin/env bash
# The GPU tests (`ctest -L gpu`) of a build, in two lanes at once where asked. Most tests share the GPU
# well (intake of every example, traces without dropped records, the doctor); the validation tests
# share one work folder (test-output/validation_gpu: the prebuilt extensions, the NVRTC cache), so they
# keep to one lane, one at a time, beside the others. The timing tests and the hanging kernel (it holds
# the GPU until its watchdog ends it) run last, one at a time, alone.
#   packaging/gpu-ctest.sh BUILD_DIR
#   NOVA_CTEST_JOBS=4             the lanes' tests at a time: 1 validation test + N-1 others (default 1:
#                                 every test alone, one after the other, as before)
#   NOVA_CTEST_SERIAL=REGEX       the tests run last and alone (default: the turnaround, the traced-
#                                 against-event time comparison and the crashing/hanging kernels)
#   NOVA_CTEST_SKIP=REGEX         tests left out (packaging/gpu-session.sh runs the turnaround test later,
#                                 when nothing else runs on the box)
# Session 21 (an H100) ran it with NOVA_CTEST_JOBS=4: 15 tests in 320 s, all passing, against 672 s one at a
# time in session 18. The exit status is the first failing pass's, else 0.
set -uo pipefail
build=${1:?BUILD_DIR}
jobs=${NOVA_CTEST_JOBS:-1}
serial=${NOVA_CTEST_SERIAL:-Turnaround|TracedGpuTimeMatchesCudaEventTime|CrashingAndHanging}
skip=${NOVA_CTEST_SKIP:-}
validation='^ValidationGpu\.'
run() { ctest --test-dir "$build" -L gpu --output-on-failure "$@"; }
if [ "$jobs" -le 1 ]; then
  run ${skip:+-E "$skip"}
  exit $?
fi
out="$build/test-output/gpu-ctest"
mkdir -p "$out"
echo "== two lanes: the validation tests one at a time, the others $((jobs - 1)) at a time (logs in $out)"
run -R "$validation" -E "$serial${skip:+|$skip}" > "$out/validation-lane.log" 2>&1 &
lane=$!
run -j "$((jobs - 1))" -E "$validation|$serial${skip:+|$skip}" > "$out/other-lane.log" 2>&1
rc=$?
wait $lane
r=$?
cat "$out/validation-lane.log" "$out/other-lane.log"
[ $rc != 0 ] || rc=$r
echo "== alone: $serial${skip:+ (not: $skip)}"
run -R "$serial" ${skip:+-E "$skip"}
r=$?
[ $rc != 0 ] || rc=$r
exit $rc
