#!/usr/bin/env bash
# A whole GPU-box session as one background job that outlives each call's 10-minute limit: the
# headless build, `nova optimize` over the examples, every GPU test beside the delivery's builds (CPU),
# the whole-model checks, the client's path, and the LLM search, one after the other, logged under
# BUILD_DIR. Each call then waits for it a while and packs what it wrote so far into $OUT.
#   packaging/gpu-session.sh start [BUILD_DIR]          starts it (setsid) and returns at once
#   packaging/gpu-session.sh wait SECONDS [BUILD_DIR]   waits up to SECONDS, then packs $OUT/run.tgz (logs,
#                                                       tables, JSON) and $OUT/projects.tgz (project stores)
#   NOVA_SESSION_STEPS="build optimize tests deliver llm client"   (the default: all, in this order)
#     more steps: carried (the project stores in .carry/projects/MODEL/project.nova, from an earlier
#     lease's optimize, in place of this one's; or from .carry/projects.tar.xz, which packs them ten times
#     smaller), turnaround (the turnaround test alone), coverage (`nova optimize` over resources/examples into
#     BUILD_DIR/coverage; NOVA_COVERAGE_MODELS picks them), coverage2 (a second such run into BUILD_DIR/coverage2,
#     of NOVA_COVERAGE_MODELS_2, so other steps can run between the two; NOVA_COVERAGE_FLAGS: more flags for both)
#     studio (packaging/studio-gpu.sh: the studio's Profile action, from the kit in .carry/studio)
#     ray (packaging/ray-gpu.sh: the local lane against a Ray head of the box, from the wheels in .carry/ray
#     that packaging/fetch-ray-wheels.sh fetched; NOVA_RAY_MODELS picks the models)
#     prepare (the delivery's exports and builds in the background at nice 19, beside the next steps; deliver
#     waits for them)
#   NOVA_OPTIMIZE_MODELS="mlp_block ..."                (the optimize step's models; default all 11)
#   NOVA_CLIENT_MODELS="mlp_block ..."                  (models that get the client's path; default three)
# Wheels the box lacks (pytest for the client's tests, kernelguard): packaging/fetch-box-wheels.sh into .whl.
# Progress, one line a step: BUILD_DIR/session/progress.txt.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
verb="${1:-}"
shift || true

# The delivery's CPU work (exports, builds, the client's pip installs), then a mark that it ran.
prepare_delivery() {  # BUILD_DIR [NICE]
  local build=$1
  NOVA_DELIVER_NICE="${2:-0}" NOVA_EXPORT_ARCH=9.0 NOVA_DELIVER_CLIENT_MODELS="${NOVA_CLIENT_MODELS:-mlp_block conv2d_min_add_multiply tiny_transformer_block}" \
    NOVA_DELIVER_PHASES=prepare NOVA_DELIVER_JOBS=3 NOVA_WHEELS="$PWD/.whl" OUT= \
    packaging/deliver-gpu.sh "$build" > "$build/session/deliver-prepare.log" 2>&1
  touch "$build/session/prepared"
}

run_steps() {
  local build=$1 log prepare_pid=""
  log="$build/session"
  mkdir -p "$log"
  step() { echo "$(date +%T) $*" >> "$log/progress.txt"; }
  # bubblewrap for the LLM's sandbox, from the carried .deb when the box has none.
  if ! command -v bwrap >/dev/null && ls .carry/debs/bubblewrap_*.deb >/dev/null 2>&1; then
    dpkg -x .carry/debs/bubblewrap_*.deb /tmp/bwrap && export PATH="/tmp/bwrap/usr/bin:$PATH"
  fi
  # kernelguard (the LLM search's second static check) into the box's python3, from the wheel that
  # packaging/fetch-box-wheels.sh put in .whl, when the box has none.
  if ! python3 -c 'import kernelguard' 2>/dev/null && ls .whl/kernelguard-*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps .whl/kernelguard-*.whl > "$log/kernelguard.txt" 2>&1 \
      || python3 -m pip install -q --no-index --no-deps --break-system-packages .whl/kernelguard-*.whl >> "$log/kernelguard.txt" 2>&1
    python3 -c 'import kernelguard; print("kernelguard", kernelguard.__file__)' >> "$log/kernelguard.txt" 2>&1
  fi
  export NOVA_SHARED="$PWD/.carry/shared" PYTHONUNBUFFERED=1
  for s in ${NOVA_SESSION_STEPS:-build optimize tests deliver llm client}; do
    local t=$SECONDS
    step "start $s"
    case $s in
      build) NOVA_SKIP_TESTS=1 packaging/gpu-server.sh "$build" > "$log/build.log" 2>&1 ;;
      optimize)
        # shellcheck disable=SC2086
        OUT= packaging/optimize-gpu.sh "$build" ${NOVA_OPTIMIZE_MODELS:-} > "$log/optimize.log" 2>&1 ;;
      prepare)  # the delivery's exports and builds (CPU) in the background, beside the next steps (not timed ones)
        prepare_delivery "$build" 19 &
        prepare_pid=$! ;;
      tests)  # every GPU test, and beside them (CPU, low priority) the delivery's exports and builds
        prepare_delivery "$build" 19 &
        local prepare=$!
        # The turnaround test times submissions end to end (target: median 10 s): with the builds beside it
        # the standby worker's torch import ran late (session 18: 14.2 s), so it runs last, alone. The others in
        # two lanes, 4 at a time unless NOVA_CTEST_JOBS says otherwise (packaging/gpu-ctest.sh; session 21: 320 s).
        OUT="$build" NOVA_CTEST_SKIP=Turnaround NOVA_CTEST_JOBS="${NOVA_CTEST_JOBS:-4}" packaging/verify-gpu.sh "$build" > "$log/tests.log" 2>&1
        step "tests rc $? in $((SECONDS - t)) s"
        # `nova profile` as a user runs it, into the optimized project (the studio opens it there); the
        # raw CUPTI trace is kept as a fixture for CI.
        for m in tiny_transformer_block mlp_block; do
          "$build/app/nova" profile "$NOVA_SHARED/examples/$m.py" --project "$build/optimize/projects/$m" \
            --trace "$build/verify/$m.novatrace" > "$build/verify/$m.profile.txt" 2>&1
          step "nova profile $m rc $?"
        done
        step "waiting for the delivery's builds"
        wait $prepare
        step "the delivery's builds ended; the turnaround test alone"
        ctest --test-dir "$build" -L gpu -R Turnaround --output-on-failure > "$log/turnaround.log" 2>&1 ;;
      deliver)  # the whole-model checks alone on the GPU (the client's path is the next step)
        [ -n "${prepare_pid:-}" ] && { step "waiting for the delivery's builds"; wait "$prepare_pid"; }
        [ -f "$log/prepared" ] || prepare_delivery "$build"  # no tests or prepare step ran them
        NOVA_DELIVER_CLIENT=0 NOVA_DELIVER_PHASES=check OUT= packaging/deliver-gpu.sh "$build" > "$log/deliver-check.log" 2>&1 ;;
      client)
        # shellcheck disable=SC2086
        NOVA_DELIVER_PHASES=check NOVA_DELIVER_CHECK=0 OUT= \
          packaging/deliver-gpu.sh "$build" ${NOVA_CLIENT_MODELS:-mlp_block conv2d_min_add_multiply tiny_transformer_block} \
          > "$log/deliver-client.log" 2>&1 ;;
      llm) tests/support/llm_server/gpu_search.sh "$build" "$build/llm" > "$log/llm.log" 2>&1 ;;
      carried)
        [ -f .carry/projects.tar.xz ] && tar xJf .carry/projects.tar.xz -C .carry
        for f in .carry/projects/*/project.nova; do
          mkdir -p "$build/optimize/projects/$(basename "$(dirname "$f")")" && cp "$f" "$_/"
        done
        ls "$build/optimize/projects" > "$log/carried.txt" ;;
      ray)
        # shellcheck disable=SC2086
        packaging/ray-gpu.sh "$build" ${NOVA_RAY_MODELS:-} > "$log/ray.log" 2>&1 ;;
      studio)  # the studio's Profile action on this GPU (packaging/studio-gpu.sh, with the kit built on the CPU
        # machine by packaging/studio-kit.sh and carried in .carry/studio; a later call may bring them)
        if [ -x packaging/studio-gpu.sh ] && [ -f .carry/studio/kit.tar.xz ]; then
          packaging/studio-gpu.sh "$build" "$build/studio" > "$log/studio.log" 2>&1
        else
          echo "no studio kit in .carry/studio (packaging/studio-kit.sh makes it)" > "$log/studio.log"; false
        fi ;;
      turnaround) ctest --test-dir "$build" -L gpu -R Turnaround --output-on-failure > "$log/turnaround.log" 2>&1 ;;
      coverage|coverage2)
        local models=${NOVA_COVERAGE_MODELS:-$(cd resources/examples && ls *.py | sed 's/\.py$//' | grep -v '_large$')}
        [ "$s" = coverage2 ] && models=${NOVA_COVERAGE_MODELS_2:-}
        if [ -z "$models" ]; then echo "coverage2 needs NOVA_COVERAGE_MODELS_2" > "$log/$s.log"; false
        else
          # shellcheck disable=SC2086
          OUT="$build/$s" NOVA_OPTIMIZE_FLAGS="${NOVA_COVERAGE_FLAGS:-}" packaging/optimize-gpu.sh "$build" $models \
            > "$log/$s.log" 2>&1
        fi ;;
      *) echo "unknown step $s" >> "$log/progress.txt" ;;
    esac
    step "end $s rc $? in $((SECONDS - t)) s"
  done
  step "done"
}

pack() {
  local build=$1 out=${OUT:-$1/out}
  mkdir -p "$out"
  (cd "$build" && tar czf "$out/run.tgz" --exclude='*.so' --exclude='*.o' --exclude='*.safetensors' --exclude='project.nova' \
     --exclude='extensions' --exclude='deliver-packages' --exclude='deliver-venvs' --exclude='reports' \
     --exclude='inputs' --exclude='traces' --exclude='packages' --exclude='work' \
     session optimize/*.txt optimize/*.json optimize/*.log coverage*/optimize/*.txt coverage*/optimize/*.json \
     coverage*/optimize/*.log studio ray/*.txt ray/local ray/ray deliver verify llm 2>/dev/null)
  (cd "$build" && find optimize/projects llm/projects coverage*/optimize/projects ray/local/optimize/projects ray/ray/optimize/projects -name project.nova 2>/dev/null \
     | tar czf "$out/projects.tgz" -T - 2>/dev/null)
  ls -la "$out"
}

case $verb in
  start)
    build="$(realpath -m "${1:-build-headless}")"
    mkdir -p "$build/session"
    : > "$build/session/progress.txt"
    rm -f "$build/session/prepared"
    export -f run_steps prepare_delivery
    setsid bash -c "run_steps '$build'" > "$build/session/driver.log" 2>&1 < /dev/null &
    echo "started; progress in $build/session/progress.txt" ;;
  wait)
    limit=${1:?seconds}
    build="$(realpath -m "${2:-build-headless}")"
    end=$((SECONDS + limit))
    while [ $SECONDS -lt $end ] && ! grep -q " done$" "$build/session/progress.txt" 2>/dev/null; do sleep 5; done
    cat "$build/session/progress.txt"
    tail -5 "$build/session/driver.log" 2>/dev/null
    pack "$build" ;;
  *) sed -n 2,12p "$0"; exit 2 ;;
esac
