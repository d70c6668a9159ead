#!/usr/bin/env bash
# Delivery on the GPU box, as a user runs it, after packaging/optimize-gpu.sh filled the projects:
# per model, `nova export` from its project, `nova check-package` (the whole model: validation, then
# eager / torch.compile / ModelNew / torch.compile of ModelNew, cold and wall; stored in the project),
# then the client's path: a fresh virtual environment (system site packages, no network), `pip
# install --no-build-isolation` of the package, its own pytest suite and its benchmark.py.
#   packaging/deliver-gpu.sh [BUILD_DIR] [MODEL ...]   (default: the 9 shared examples)
#   NOVA_DELIVER_CLIENT=0 ...                          (skip the fresh-venv install, tests and benchmark.py)
# Output under $OUT/deliver (or BUILD_DIR/deliver): MODEL.export.txt, MODEL.check.txt/.json, MODEL.pytest.txt,
# MODEL.bench.txt/.json, and summary.txt (one line per model).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="$(realpath -m "${1:-build-headless}")"
shift || true
nova="$build/app/nova"
[ -x "$nova" ] || { echo "no $nova: run packaging/gpu-server.sh first"; exit 2; }
out="${OUT:-$build}/deliver"
projects="$build/optimize/projects"
mkdir -p "$out"
shared="${NOVA_SHARED:-}"
[ -n "$shared" ] || { [ -d ../shared/examples ] && shared=../shared; } || true
[ -n "$shared" ] || shared=.carry/shared
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(conv2d_min_add_multiply matmul_scaling_residual_add swish_bias_clamp softmax_rows
                                    layernorm_gelu linear_relu_bias conv2d_relu_hardswish mlp_block tiny_transformer_block)
: > "$out/summary.txt"
for m in "${models[@]}"; do
  model="$shared/examples/$m.py"; [ -f "$model" ] || model="resources/examples/$m.py"
  pkg="$build/deliver-packages/$m"
  rm -rf "$pkg"
  if ! "$nova" export "$model" --project "$projects/$m" --out "$pkg" > "$out/$m.export.txt" 2>&1; then
    echo "$m: export failed: $(tail -1 "$out/$m.export.txt")" | tee -a "$out/summary.txt"; continue
  fi
  "$nova" check-package "$model" --project "$projects/$m" --package "$pkg" --out "$out/$m.check.json" \
    > "$out/$m.check.txt" 2> "$out/$m.check.log"
  rc=$?
  line=$(grep -E "^optimized vs eager" "$out/$m.check.txt" | head -1)
  echo "$m: check-package rc $rc; $line" | tee -a "$out/summary.txt"
  [ "${NOVA_DELIVER_CLIENT:-1}" = 1 ] || continue
  venv="$build/deliver-venvs/$m"
  rm -rf "$venv"
  python3 -m venv --system-site-packages "$venv" &&
    "$venv/bin/python" -m pip install -q --no-build-isolation --no-deps --no-index "$pkg" > "$out/$m.pip.txt" 2>&1
  echo "$m: pip install rc $?" | tee -a "$out/summary.txt"
  (cd "$pkg" && "$venv/bin/python" -m pytest -q -p no:cacheprovider tests > "$out/$m.pytest.txt" 2>&1)
  echo "$m: package tests: $(tail -1 "$out/$m.pytest.txt")" | tee -a "$out/summary.txt"
  (cd "$pkg" && "$venv/bin/python" benchmark.py --json "$out/$m.bench.json" > "$out/$m.bench.txt" 2>&1)
  echo "$m: benchmark.py rc $?" | tee -a "$out/summary.txt"
done
cat "$out/summary.txt"
