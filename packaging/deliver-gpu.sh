#!/usr/bin/env bash
# Delivery on the GPU box, as a user runs it, after packaging/optimize-gpu.sh filled the projects.
# Per model: `nova export` from its project, `nova check-package` (the whole model: validation, then
# eager / torch.compile / ModelNew / torch.compile of ModelNew, cold and wall; stored in the project),
# then the client's path: a fresh virtual environment (system site packages, no network), `pip
# install --no-build-isolation` of the package, its own pytest suite and its benchmark.py.
# Two phases: first every model's CPU work side by side (export, the check's build with
# `nova check-package --build-only`, the client's pip install: nvcc), then the GPU work one model at a
# time, so nothing else runs while a model is timed.
#   packaging/deliver-gpu.sh [BUILD_DIR] [MODEL ...]   (default: the 9 shared examples)
#   NOVA_DELIVER_CLIENT=0 ...                          (skip the fresh-venv install, tests and benchmark.py)
#   NOVA_DELIVER_CLIENT_MODELS="a b" ...               (the client's path for these models only; default all)
#   NOVA_DELIVER_PHASES=prepare|check|all ...          (default all; NOVA_DELIVER_PREPARE=0 means check)
#   NOVA_DELIVER_CHECK=0 ...                           (phase 2 without the whole-model check and report)
#   NOVA_EXPORT_ARCH=9.0 ...                           (`nova export --arch`: the box's own GPU only, half
#                                                       the nvcc work of the default list)
#   NOVA_DELIVER_NICE=19 ...                           (phase 1's priority, when it shares the box)
#   NOVA_DELIVER_JOBS=4 ...                            (models built side by side in the first phase)
#   NOVA_WHEELS=DIR ...                                (where pytest's wheels are when the system has no pytest)
# Output under $OUT/deliver (or BUILD_DIR/deliver): MODEL.export.txt, MODEL.build.txt, MODEL.pip.txt,
# MODEL.check.txt/.json, MODEL.pytest.txt, MODEL.bench.txt/.json, reports/MODEL/ (nova report), summary.txt
# (one line per step), and projects.tgz (every model's project store).
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
client="${NOVA_DELIVER_CLIENT:-1}"
client_models=" ${NOVA_DELIVER_CLIENT_MODELS:-${models[*]}} "
phases="${NOVA_DELIVER_PHASES:-all}"
[ "${NOVA_DELIVER_PREPARE:-1}" = 0 ] && phases=check
wants_client() { [ "$client" = 1 ] && [[ "$client_models" == *" $1 "* ]]; }
model_file() { local m="$shared/examples/$1.py"; [ -f "$m" ] || m="resources/examples/$1.py"; echo "$m"; }
say() { echo "$*" | tee -a "$out/summary.txt"; }

# Phase 1 (CPU, side by side): export, the check's build, the client's install.
prepare() {
  local m=$1 model pkg venv
  model=$(model_file "$m"); pkg="$build/deliver-packages/$m"; venv="$build/deliver-venvs/$m"
  rm -rf "$pkg" "$venv"
  if ! "$nova" export "$model" --project "$projects/$m" --out "$pkg" ${NOVA_EXPORT_ARCH:+--arch "$NOVA_EXPORT_ARCH"} > "$out/$m.export.txt" 2>&1; then
    say "$m: export failed: $(tail -1 "$out/$m.export.txt")"; return
  fi
  "$nova" check-package "$model" --project "$projects/$m" --package "$pkg" --build-only > "$out/$m.build.txt" 2>&1
  say "$m: check-package --build-only rc $?"
  wants_client "$m" || return
  python3 -m venv --system-site-packages "$venv" || { say "$m: no virtual environment"; return; }
  # A torch that python3 finds outside the system site folders (a user site, PYTHONPATH) is the
  # client's torch too: the venv gets it through a .pth file.
  if ! "$venv/bin/python" -c 'import torch' 2>/dev/null; then
    python3 -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' \
      > "$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/client_torch.pth"
  fi
  # The package's tests need pytest, which the client installs; without a network it comes from the
  # wheels folder (NOVA_WHEELS, default .whl) when the system has none.
  if ! "$venv/bin/python" -c 'import pytest' 2>/dev/null; then
    "$venv/bin/python" -m pip install -q --no-index --find-links "${NOVA_WHEELS:-.whl}" pytest > "$out/$m.pytest-install.txt" 2>&1 \
      || say "$m: pytest not installed: $(tail -1 "$out/$m.pytest-install.txt")"
  fi
  "$venv/bin/python" -m pip install -q --no-build-isolation --no-deps --no-index "$pkg" > "$out/$m.pip.txt" 2>&1
  say "$m: client pip install rc $?"
}
[ "$phases" = check ] || : > "$out/summary.txt"
start=$(date +%s)
export -f prepare model_file say wants_client; export nova projects build out shared client client_models
export NOVA_EXPORT_ARCH="${NOVA_EXPORT_ARCH:-}"
if [ "$phases" != check ]; then
  printf '%s\n' "${models[@]}" | nice -n "${NOVA_DELIVER_NICE:-0}" xargs -P "${NOVA_DELIVER_JOBS:-4}" -I{} \
    bash -c 'prepare {}'
  say "phase 1 (export and builds, side by side) took $(( $(date +%s) - start )) s"
fi
[ "$phases" = prepare ] && exit 0

# Phase 2 (GPU, one model at a time): the whole-model check, the package's tests, its benchmark.
for m in "${models[@]}"; do
  model=$(model_file "$m"); pkg="$build/deliver-packages/$m"; venv="$build/deliver-venvs/$m"
  [ -f "$pkg/pyproject.toml" ] || continue
  t=$(date +%s)
  if [ "${NOVA_DELIVER_CHECK:-1}" = 1 ]; then
    "$nova" check-package "$model" --project "$projects/$m" --package "$pkg" --out "$out/$m.check.json" \
      > "$out/$m.check.txt" 2> "$out/$m.check.log"
    rc=$?
    say "$m: check-package rc $rc in $(( $(date +%s) - t )) s; $(grep -E "^optimized vs eager" "$out/$m.check.txt" | head -1)"
    # The client report from what the project now holds (the whole-model check included).
    "$nova" report "$model" --project "$projects/$m" --out "$out/reports/$m" > "$out/$m.report.txt" 2>&1
    say "$m: nova report rc $?"
  fi
  wants_client "$m" && [ -x "$venv/bin/python" ] || continue
  (cd "$pkg" && "$venv/bin/python" -m pytest -q -p no:cacheprovider tests > "$out/$m.pytest.txt" 2>&1)
  say "$m: package tests: $(tail -1 "$out/$m.pytest.txt")"
  (cd "$pkg" && "$venv/bin/python" benchmark.py --json "$out/$m.bench.json" > "$out/$m.bench.txt" 2>&1)
  say "$m: benchmark.py rc $? (at $(( $(date +%s) - start )) s)"
done
# The projects' stores alone (every result, small; not the example inputs or the builds), so the
# results can travel back and be reported on elsewhere: tar xzf projects.tgz, then nova report --project.
(cd "$projects" && tar czf "$out/projects.tgz" */project.nova 2>/dev/null)
cat "$out/summary.txt"
