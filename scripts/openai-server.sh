#!/usr/bin/env bash
# A real OpenAI-compatible server for the LLM client's live test: llama-cpp-python's server
# (PyPI `llama-cpp-python[server]`, built from source: ~10 min the first time on 2 cores, then
# kept as a wheel) serving the SmolLM2 GGUF fetched by `chatty-kg models fetch`.
#   scripts/openai-server.sh start DIR GGUF   → prints the base URL (http://127.0.0.1:PORT/v1)
#   scripts/openai-server.sh stop DIR
# The virtualenv lives in $CHATTY_KG_VENV (default /var/tmp/chatty-kg-llama-server-venv), the
# built wheel in $CHATTY_KG_WHEELS (default /var/tmp/chatty-kg-wheels).
# The wheel is built portable (GGML_NATIVE=OFF: AVX2/FMA/F16C, no AVX-512, no AMX), as the
# embedded llama.cpp of llama-cpp-2 is: a native build on a virtual machine that advertises AMX
# without enabling it dies with a general protection fault (ldtilecfg) on its first request.
set -euo pipefail
venv=${CHATTY_KG_VENV:-/var/tmp/chatty-kg-llama-server-venv}
wheels=${CHATTY_KG_WHEELS:-/var/tmp/chatty-kg-wheels}
version=0.3.36
build=portable-1
cmd=${1:?usage: openai-server.sh start DIR GGUF | stop DIR}
dir=${2:?directory for the pid and log files}
case "$cmd" in
  start)
    gguf=${3:?GGUF model file}
    mkdir -p "$dir"
    wheels="$wheels/$build"
    if [ "$(cat "$venv/chatty-kg-build" 2>/dev/null)" != "$version-$build" ] ||
      ! "$venv/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
      if ! ls "$wheels"/llama_cpp_python-"$version"-*.whl >/dev/null 2>&1; then
        echo "building llama-cpp-python $version ($build) into $wheels (first time only; ~10 min)" >&2
        CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
          python3 -m pip wheel --quiet --no-deps --no-cache-dir --wheel-dir "$wheels" \
          "llama-cpp-python==$version" >&2
      fi
      rm -rf "$venv"
      python3 -m venv "$venv"
      "$venv/bin/pip" install --quiet --find-links "$wheels" "llama-cpp-python[server]==$version" >&2
      echo "$version-$build" >"$venv/chatty-kg-build"
    fi
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$venv/bin/python" -m llama_cpp.server --model "$gguf" --host 127.0.0.1 --port "$port" \
      --n_ctx 2048 --model_alias smollm2 >"$dir/server.log" 2>&1 &
    echo $! >"$dir/server.pid"
    for _ in $(seq 1 120); do
      if curl -fsS "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1; then
        echo "http://127.0.0.1:$port/v1"
        exit 0
      fi
      kill -0 "$(cat "$dir/server.pid")" 2>/dev/null || break
      sleep 1
    done
    echo "llama-cpp-python server did not start; its log:" >&2
    tail -20 "$dir/server.log" >&2
    exit 1
    ;;
  stop)
    [ -f "$dir/server.pid" ] && kill "$(cat "$dir/server.pid")" 2>/dev/null || true
    ;;
  *) echo "usage: openai-server.sh start DIR GGUF | stop DIR" >&2; exit 2 ;;
esac
