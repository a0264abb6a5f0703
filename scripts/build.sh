#!/usr/bin/env bash
# The one debug build every script uses (demo, tests): the binary and every test, with one
# resolution of features and profiles. `cargo build --bin chatty-kg` alone compiles the build
# scripts' dependencies differently from `cargo test` (walkdir, shared with a test dependency,
# gets the dependencies' profile in one and the build-override profile in the other), so
# llama.cpp was compiled twice on a fresh machine; after this, `cargo test --workspace` and
# `cargo build --workspace --benches --profile dev` compile no C++ again.
# Prints the binary's path.
set -euo pipefail
cd "$(dirname "$0")/.." >/dev/null
cargo test --workspace --no-run --quiet >&2
echo "${CARGO_TARGET_DIR:-target}/debug/chatty-kg"
