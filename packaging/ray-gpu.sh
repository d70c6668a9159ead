#!/usr/bin/env bash
# The Ray lane on the GPU box against the local lane (issue #26's one-GPU check): the same models through
# `nova optimize` twice, into fresh projects, once on the local worker lane and once with `--ray` on a
# Ray head of this one machine (its GPU), then their verdicts and ratios side by side
# (packaging/ray-compare.py). Ray comes from the wheels packaging/fetch-ray-wheels.sh put in .carry/ray (the
# box has no Ray and no network), into a virtual environment that sees the box's torch; both runs use that
# environment's Python for the workers, so they differ in the lane only.
#   packaging/ray-gpu.sh [BUILD_DIR] [MODEL ...]      (default: swish_bias_clamp matmul_scaling_residual_add)
#   NOVA_RAY_WHEELS=DIR ...                           (where the wheels are; default .carry/ray)
# Output in BUILD_DIR/ray: local/optimize/ and ray/optimize/ (each packaging/optimize-gpu.sh's table, log,
# JSON per model and projects), ray-start.txt, compare.txt.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="$(realpath -m "${1:-build-headless}")"
shift || true
out="$build/ray"
venv="$build/ray-venv"
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(swish_bias_clamp matmul_scaling_residual_add)
rm -rf "$out"
mkdir -p "$out"
export RAY_USAGE_STATS_ENABLED=0

# The environment: python3's torch through a .pth file (python3 may itself be a venv's), Ray offline.
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import ray' 2>/dev/null; then
  python3 -m venv --system-site-packages "$venv" || { echo "no virtual environment"; exit 1; }
  if ! "$venv/bin/python" -c 'import torch' 2>/dev/null; then
    python3 -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' \
      > "$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/box_torch.pth"
  fi
  "$venv/bin/python" -c 'import torch' 2>/dev/null || { echo "python3 has no torch: the workers would have none"; exit 1; }
  "$venv/bin/python" -m pip install -q --no-index --find-links "${NOVA_RAY_WHEELS:-.carry/ray}" ray > "$out/ray-install.txt" 2>&1 \
    || { echo "ray did not install: $(tail -3 "$out/ray-install.txt")"; exit 1; }
fi
export NOVA_PYTHON="$venv/bin/python"
ray_cli() { "$venv/bin/python" -c 'import sys; from ray.scripts.scripts import main; sys.exit(main())' "$@"; }

run() {  # LANE [nova optimize flags...]: packaging/optimize-gpu.sh into $out/LANE/optimize
  local lane=$1 start=$SECONDS; shift
  OUT="$out/$lane" NOVA_OPTIMIZE_FLAGS="$*" packaging/optimize-gpu.sh "$build" "${models[@]}" > /dev/null 2>&1
  echo "$lane: nova optimize rc $? in $((SECONDS - start)) s"
}

run local
port=6390
ray_cli start --head --port "$port" --include-dashboard=false --disable-usage-stats > "$out/ray-start.txt" 2>&1 \
  || { echo "the Ray head did not start: $(tail -3 "$out/ray-start.txt")"; exit 1; }
run ray --ray "127.0.0.1:$port"
ray_cli stop > "$out/ray-stop.txt" 2>&1
python3 packaging/ray-compare.py "$out/local/optimize" "$out/ray/optimize" "${models[@]}" | tee "$out/compare.txt"
