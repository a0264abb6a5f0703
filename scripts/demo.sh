#!/usr/bin/env bash
# The offline demo on the embedded defaults: build, fetch the default models when missing, load the
# bundled MetaQA KB into the default store if it is not loaded yet, search entities, and ask the
# embedded model for grammar-constrained JSON. Arguments replace the sample search.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --quiet --bin chatty-kg
bin=${CARGO_TARGET_DIR:-target}/debug/chatty-kg
"$bin" models fetch
if ! "$bin" entities --limit 1 "tom hanks" >/dev/null 2>&1; then
  "$bin" load datasets/metaqa-kb.nt.gz
fi
query=${*:-tom hanks}
echo "chatty-kg entities --limit 5 \"$query\"" >&2
"$bin" entities --limit 5 "$query"
schema='{"type":"object","properties":{"entities":{"type":"array","items":{"type":"string","maxLength":60},"maxItems":4},"triples":{"type":"array","items":{"type":"array","items":{"type":"string","maxLength":60},"minItems":3,"maxItems":3},"minItems":1,"maxItems":3}},"required":["entities","triples"],"additionalProperties":false}'
echo "chatty-kg llm --schema … \"Which movies did Tom Hanks star in?\"" >&2
"$bin" llm --schema "$schema" \
  --system "Extract the entities and the triples [subject, relation, object] of the question; use ?answer for the unknown." \
  "Which movies did Tom Hanks star in?"
