#!/usr/bin/env bash
# The builtin generator on the GPU box, end to end, as a user runs it: for every example model's
# recorded graph (tests/fixtures/graphs), `nova generate --all`, then `nova validate` (5 trials) and
# `nova bench --mode all` (NOVA_BENCH_MODE) for every candidate, alternatives included (groupN.RULE:
# each validated, and timed if it passed). Writes each result JSON to $OUT/gen (or build-headless/gen)
# and prints a summary table last (packaging/generator-summary.py): per candidate the speedups and the
# verdict (ships, or declined: eager kept), per group the one that ships, then the geometric means.
#   packaging/generator-gpu.sh [BUILD_DIR] [MODEL ...]     (default: the shared examples)
#   NOVA_GENERATE_FLAGS=--no-alternatives packaging/generator-gpu.sh ...   (generator options; the
#   summary then covers what those options wrote)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="$(realpath -m "${1:-build-headless}")"
shift || true
out="${OUT:-$build}/gen"
mkdir -p "$out"
[ -x "$build/app/nova" ] || packaging/gpu-server.sh "$build" > "$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
nova="$build/app/nova"
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(conv2d_min_add_multiply matmul_scaling_residual_add swish_bias_clamp softmax_rows
                                    layernorm_gelu linear_relu_bias conv2d_relu_hardswish mlp_block tiny_transformer_block
                                    conv2d_min_add_multiply_large matmul_scaling_residual_add_large)
# Validation is about correctness, not time: the candidates are validated side by side
# (NOVA_VALIDATE_JOBS at once, default 4). The benchmarks then run one at a time, alone on the GPU.
jobs="${NOVA_VALIDATE_JOBS:-4}"
mode="${NOVA_BENCH_MODE:-all}"
queue=()
for m in "${models[@]}"; do
  graph="tests/fixtures/graphs/$m.json"
  [ -f "$graph" ] || graph="tests/fixtures/graphs/$m.graph.json"
  # shellcheck disable=SC2086  # the flags are words on purpose
  "$nova" generate "$m.py" --all --graph "$graph" ${NOVA_GENERATE_FLAGS:-} --out "$out/$m" > "$out/$m.generate.txt" 2>&1
  for cand in "$out/$m"/group*.candidate.json; do  # groupN (the primary) and groupN.RULE (alternatives)
    tag=$(basename "$cand" .candidate.json); tag=${tag#group}
    grep -q '"declined": null' "$cand" || continue
    queue+=("$m $tag $graph $cand")
  done
done
running=0
for item in "${queue[@]}"; do
  read -r m tag graph cand <<< "$item"
  "$nova" validate "$graph" --group "${tag%%.*}" --candidate "$cand" --out "$out/${m}_g${tag}.validate.json" \
    > "$out/${m}_g${tag}.validate.txt" 2>&1 &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait
for item in "${queue[@]}"; do
  read -r m tag graph cand <<< "$item"
  python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])).get("passed") else 1)' \
    "$out/${m}_g${tag}.validate.json" 2>/dev/null || continue  # a kernel that failed validation is not timed
  "$nova" bench "$graph" --group "${tag%%.*}" --candidate "$cand" --mode "$mode" --out "$out/${m}_g${tag}.bench.json" \
    > "$out/${m}_g${tag}.bench.txt" 2>&1
done
python3 packaging/generator-summary.py "$out" "${models[@]}"
