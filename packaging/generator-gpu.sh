#!/usr/bin/env bash
# The builtin generator on the GPU box, end to end, as a user runs it: for every example model's
# recorded graph (tests/fixtures/graphs), `nova generate --all`, then `nova validate` (5 trials) and
# `nova bench --mode all` for every candidate. Writes each result JSON to $OUT/gen (or
# build-headless/gen) and prints a summary table last (packaging/generator-summary.py): per group
# the speedups and the verdict (ships, or declined: eager kept), then the geometric means.
#   packaging/generator-gpu.sh [BUILD_DIR] [MODEL ...]     (default: the shared examples)
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
                                    layernorm_gelu linear_relu_bias conv2d_relu_hardswish mlp_block tiny_transformer_block)
for m in "${models[@]}"; do
  graph="tests/fixtures/graphs/$m.json"
  "$nova" generate "$m.py" --all --graph "$graph" --out "$out/$m" > "$out/$m.generate.txt" 2>&1
  for cand in "$out/$m"/group*.candidate.json; do
    g=$(basename "$cand" .candidate.json); g=${g#group}
    grep -q '"declined": null' "$cand" || continue
    "$nova" validate "$graph" --group "$g" --candidate "$cand" --out "$out/${m}_g${g}.validate.json" \
      > "$out/${m}_g${g}.validate.txt" 2>&1
    "$nova" bench "$graph" --group "$g" --candidate "$cand" --mode all --out "$out/${m}_g${g}.bench.json" \
      > "$out/${m}_g${g}.bench.txt" 2>&1
  done
done
python3 packaging/generator-summary.py "$out" "${models[@]}"
