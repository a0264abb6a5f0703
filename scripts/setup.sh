#!/usr/bin/env bash
# Installs the Debian packages chatty-kg needs to build and test, when they are missing:
# libclang-dev (bindgen for RocksDB), cmake (llama.cpp), virtuoso-opensource (remote-endpoint
# tests), python3 (test helpers) unless one is on the PATH. Needs root (or sudo) only when
# something is missing.
set -euo pipefail
packages=(libclang-dev cmake virtuoso-opensource)
missing=()
for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
command -v python3 >/dev/null || missing+=(python3)
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
