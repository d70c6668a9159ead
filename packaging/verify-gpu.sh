#!/usr/bin/env bash
# Validation and benchmarks on the GPU box, in one command (run from the repo root):
#   packaging/verify-gpu.sh [BUILD_DIR]        (default: build-headless, kept between calls)
# Pre-builds the full-path extensions the GPU tests use (nvcc + ninja, in the background while
# CMake builds), runs packaging/gpu-server.sh (headless build + `ctest -L gpu` + doctor), then
# `nova bench` on the hand-written fast-path candidate and `nova validate` on the seed's kernel.
# Everything lands in $OUT/verify (or ./verify-out): the GPU tests' JSON results, the jobs'
# result files, the CLI's JSON and text, and the logs.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="$(realpath -m "${1:-build-headless}")"
out="${OUT:-$PWD/build-headless}/verify"
python="${NOVA_PYTHON:-python3}"
mkdir -p "$out" "$build/test-output/validation_gpu/work/extensions"
arch=$("$python" -c 'import torch;p=torch.cuda.get_device_properties(0);print(f"sm_{p.major}{p.minor}")')
for f in tests/fixtures/reference_kernels/conv2d_min_add_multiply.seed.cu \
         tests/fixtures/adversarial/return_input.ext.cu tests/fixtures/adversarial/side_stream.ext.cu; do
  n=$(basename "$f" .cu)
  # One request over the worker protocol (docs/WORKER_PROTOCOL.md) to a one-shot worker.
  printf '{"type": "request", "id": 1, "protocol": 2, "cmd": "build_ext", "args": {"extension": "%s", "build_dir": "%s", "arch": "%s"}}\n' \
    "$PWD/$f" "$build/test-output/validation_gpu/work/extensions" "$arch" \
    | PYTHONPATH=resources/python "$python" -m nova_worker --once > "$out/prebuild-$n.log" 2>&1 &
done
NOVA_PYTHON="$python" packaging/gpu-server.sh "$build" > "$out/gpu-server.log" 2>&1
rc=$?
wait
cp "$build"/test-output/validation_gpu/*.json "$out/" 2>/dev/null
cp -r "$build"/test-output/validation_gpu/jobs "$out/" 2>/dev/null
nova="$build/app/nova"
"$nova" bench tests/fixtures/groups/conv2d_min_add_multiply_group0.py \
  --candidate tests/fixtures/candidates/conv_min_add_mul_epilogue.plan.json --mode all \
  --out "$out/bench_cli.json" > "$out/bench_cli.txt" 2>&1
"$nova" validate resources/examples/conv2d_min_add_multiply.py \
  --candidate tests/fixtures/reference_kernels/conv2d_min_add_multiply.seed.cu \
  --out "$out/seed_validate_cli.json" > "$out/seed_validate_cli.txt" 2>&1
grep -E "^\[ +(OK|FAILED|SKIPPED) +\]|turnaround|submission|speedup|: (refused|failed|passed)|tests passed|tests failed" \
  "$out/gpu-server.log" | tail -60
"$python" - "$out" <<'PY'
import json, os, sys
d = sys.argv[1]
def load(n):
    p = os.path.join(d, n + ".json")
    return json.load(open(p)) if os.path.exists(p) else None
t = load("turnaround")
if t: print(f"turnaround: median {t['median_s']:.1f} s of {[round(x, 1) for x in t['seconds']]} (target {t['target_s']} s)")
for n in ("epilogue_validation", "seed_validation", "side_stream_runtime"):
    v = load(n)
    if v: print(f"{n}: {v['verdict']} (build {v['build_s']:.1f} s)")
for f in load("adversarial_battery") or []:
    print(f"battery {f['fixture']}: caught={f['caught']}: {f['result']['verdict'][:160]}")
b = load("epilogue_bench")
if b:
    for s in b["speedups"]: print(f"speedup over {s['baseline']} ({s['mode']}): {s['value']:.2f}x")
    for f in b["flags"]: print("flag:", f)
PY
cat "$out/bench_cli.txt" "$out/seed_validate_cli.txt"
echo "gpu-server.sh exit code: $rc"
exit $rc
