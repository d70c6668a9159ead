#!/usr/bin/env bash
# `nova optimize` on the GPU box, as a user runs it: builds the headless engine if BUILD_DIR has no
# `nova` yet (packaging/gpu-server.sh), then runs `nova optimize` over the example models, each in its
# own project under $OUT/optimize/projects (or BUILD_DIR/optimize), and prints the figures over all of
# them last. Each model's table goes to MODEL.txt, its progress to MODEL.log, its selection to MODEL.json.
#   packaging/optimize-gpu.sh [BUILD_DIR] [MODEL ...]     (default: the shared examples + the two *_large.py)
#   NOVA_BENCH_MODE=all packaging/optimize-gpu.sh ...      (cold by default; wall is always timed)
#   NOVA_OPTIMIZE_FLAGS="--no-alternatives" ...            (more `nova optimize` flags)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="$(realpath -m "${1:-build-headless}")"
shift || true
out="${OUT:-$build}/optimize"
mkdir -p "$out"
[ -x "$build/app/nova" ] || NOVA_SKIP_TESTS=1 packaging/gpu-server.sh "$build" > "$out/build.log" 2>&1 \
  || { tail -50 "$out/build.log"; exit 1; }
shared="${NOVA_SHARED:-}"
[ -n "$shared" ] || { [ -d ../shared/examples ] && shared=../shared; } || true
[ -n "$shared" ] || shared=.carry/shared
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(conv2d_min_add_multiply matmul_scaling_residual_add swish_bias_clamp softmax_rows
                                    layernorm_gelu linear_relu_bias conv2d_relu_hardswish mlp_block tiny_transformer_block
                                    conv2d_min_add_multiply_large matmul_scaling_residual_add_large)
paths=()
for m in "${models[@]}"; do
  p="$shared/examples/$m.py"; [ -f "$p" ] || p="resources/examples/$m.py"
  [ -f "$p" ] || { echo "no example model $m"; exit 2; }
  paths+=("$p")
done
# shellcheck disable=SC2086  # the flags are words on purpose
"$build/app/nova" optimize "${paths[@]}" --project "$out/projects" --mode "${NOVA_BENCH_MODE:-cold}" \
  --out "$out/{}.json" ${NOVA_OPTIMIZE_FLAGS:-} > "$out/optimize.txt" 2> "$out/optimize.log"
rc=$?
cat "$out/optimize.txt"
exit $rc
