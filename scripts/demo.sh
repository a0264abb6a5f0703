#!/usr/bin/env bash
# The offline demo on the embedded defaults: build, load the bundled MetaQA KB into the default
# store if it is not loaded yet, then search entities. Arguments replace the sample search.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --quiet --bin chatty-kg
bin=${CARGO_TARGET_DIR:-target}/debug/chatty-kg
if ! "$bin" entities --limit 1 "tom hanks" >/dev/null 2>&1; then
  "$bin" load datasets/metaqa-kb.nt.gz
fi
query=${*:-tom hanks}
echo "chatty-kg entities --limit 5 \"$query\"" >&2
"$bin" entities --limit 5 "$query"
