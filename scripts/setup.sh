#!/usr/bin/env bash
# Installs the Debian packages chatty-kg needs to build and test, when they are missing:
# libclang-dev (bindgen for RocksDB), cmake (llama.cpp), virtuoso-opensource (remote-endpoint
# tests), postgresql (the shared-session store's tests, scripts/postgres.sh) unless a PostgreSQL
# server is installed already, chromium (the web page test), curl, and python3 with pip and venv
# (fetching models, the live LLM server test) unless they are on the PATH already. Needs root (or
# sudo) only when something is missing.
set -euo pipefail
packages=(libclang-dev cmake virtuoso-opensource chromium curl)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
# Any version's server will do (Debian's postgresql pulls in the distribution's postgresql-N).
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
command -v python3 >/dev/null || missing+=(python3)
python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
python3 -c "import ensurepip, venv" >/dev/null 2>&1 || missing+=(python3-venv)
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
