#!/usr/bin/env bash
# The builtin generator on the GPU box, end to end, as a user runs it: for every example model's
# recorded graph (tests/fixtures/graphs), `nova generate --all`, then `nova validate` (5 trials) and
# `nova bench --mode all` for every candidate. Writes each result JSON to $OUT/gen (or
# build-headless/gen) and prints a summary table last.
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
python3 - "$out" "${models[@]}" <<'PY'
import glob, json, math, os, sys
out, models = sys.argv[1], sys.argv[2:]
def load(p):
    try: return json.load(open(p))
    except Exception: return None
print(f"{'model':<30}{'grp':>4} {'rule':<24}{'valid':<7}{'max rel':>9} {'cold eager':>10} {'cold comp':>9} {'wall eager':>10} {'wall comp':>9}")
logs = []
for m in models:
    for cand in sorted(glob.glob(f"{out}/{m}/group*.candidate.json")):
        c = load(cand); g = c["group_id"]
        v = load(f"{out}/{m}_g{g}.validate.json"); b = load(f"{out}/{m}_g{g}.bench.json")
        if c.get("declined"):
            print(f"{m:<30}{g:>4} declined: {c['declined'][:60]}"); continue
        rel = max([t.get("max_rel_vs_eager") or 0 for t in (v or {}).get("trials", [])] or [float('nan')])
        sp = {(s["mode"], s["baseline"]): s["value"] for s in (b or {}).get("speedups", [])}
        f = lambda k: f"{sp[k]:.2f}x" if k in sp else "-"
        verdict = "pass" if v and v.get("passed") else ("FAIL" if v else "none")
        print(f"{m:<30}{g:>4} {c['origin']['rule']:<24}{verdict:<7}{rel:>9.2e} {f(('cold','eager')):>10} {f(('cold','compile')):>9} {f(('wall','eager')):>10} {f(('wall','compile')):>9}")
        if not (v and v.get("passed")): logs.append(f"{out}/{m}_g{g}.validate.txt")
for p in logs[:6]:
    print("==", p); print(open(p).read()[-1500:] if os.path.exists(p) else "missing")
PY
