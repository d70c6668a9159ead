#!/usr/bin/env bash
# The LLM search on the GPU box, as a user runs it: `nova llm` on two fusion groups (group 0 of
# matmul_scaling_residual_add and of swish_bias_clamp), each against the scripted loopback server
# serving kernels written for that group (tests/fixtures/llm/gpu_*.script.json), in the projects that
# `nova optimize` filled (packaging/optimize-gpu.sh), so the builtin kernel's measured times are the bar.
# One swish answer is in KernelBench's ModelNew + load_inline form: it runs on the full path (nvcc).
# The LLM's kernels run in bubblewrap; where it cannot start, the search is refused and this says so.
#   tests/support/llm_server/gpu_search.sh [BUILD_DIR] [OUT_DIR]
# Output in OUT_DIR (default BUILD_DIR/llm): NAME.txt (nova llm's table), NAME.log, NAME.status.txt,
# NAME.requests.jsonl (what the server was asked), and secrets.txt (where the API key was found: nowhere).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
build="$(realpath -m "${1:-build-headless}")"
out="$(realpath -m "${2:-$build/llm}")"
nova="$build/app/nova"
projects="$build/optimize/projects"
shared="${NOVA_SHARED:-}"
[ -n "$shared" ] || { [ -d ../shared/examples ] && shared=../shared; } || true
[ -n "$shared" ] || shared=.carry/shared
mkdir -p "$out"
key="sk-nova-device-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
status=0
search() {  # NAME MODEL SCRIPT nova-llm-flags...
  local name=$1 model=$2 script=$3; shift 3
  local project="$projects/$model"
  [ -d "$project" ] || project="$out/projects/$model"
  python3 tests/support/llm_server/scripted_llm_server.py "$script" --log "$out/$name.requests.jsonl" \
    > "$out/$name.server.txt" 2>&1 &
  local server=$! port=""
  for _ in $(seq 100); do
    port=$(sed -n 's/^PORT //p' "$out/$name.server.txt"); [ -n "$port" ] && break; sleep 0.1
  done
  [ -n "$port" ] || { echo "$name: the scripted server did not start"; cat "$out/$name.server.txt"; kill $server; return 1; }
  cat > "$out/$name.settings.json" <<JSON
{"llm_providers": [{"name": "scripted", "protocol": "openai", "base_url": "http://127.0.0.1:$port/v1",
  "model": "scripted-model", "max_tokens": 4096, "usd_per_mtok_in": 3, "usd_per_mtok_out": 15,
  "api_key_env": "NOVA_DEVICE_LLM_KEY", "connect_timeout_s": 5, "idle_timeout_s": 30}],
 "llm_default_provider": "scripted"}
JSON
  local start=$SECONDS
  NOVA_SETTINGS="$out/$name.settings.json" NOVA_DEVICE_LLM_KEY="$key" \
    "$nova" llm "$shared/examples/$model.py" --project "$project" --new "$@" > "$out/$name.txt" 2> "$out/$name.log"
  local rc=$?
  echo "$name: nova llm rc $rc in $((SECONDS - start)) s"
  cat "$out/$name.txt"
  "$nova" status "$shared/examples/$model.py" --project "$project" > "$out/$name.status.txt" 2>&1
  kill $server 2>/dev/null; wait $server 2>/dev/null
  [ $rc = 0 ] || status=1
  # The key must be in no file of the project, the logs or the outputs.
  grep -rl --exclude="*.requests.jsonl" -- "$key" "$project" "$out" 2>/dev/null | sed "s|^|$name: the API key found in |" >> "$out/secrets.txt"
}
: > "$out/secrets.txt"
search matmul matmul_scaling_residual_add tests/fixtures/llm/gpu_matmul.script.json --group 0 --lineages 2 --rounds 4 --idle-rounds 4
search swish swish_bias_clamp tests/fixtures/llm/gpu_swish.script.json --group 0 --lineages 2 --rounds 3 --idle-rounds 3
if [ -s "$out/secrets.txt" ]; then cat "$out/secrets.txt"; status=1; else echo "the API key is in no file of the projects or the outputs"; fi
exit $status
