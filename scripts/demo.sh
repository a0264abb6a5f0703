#!/usr/bin/env bash
# The offline demo on the embedded defaults: build, fetch the default models when missing, load the
# bundled MetaQA KB into the default store if it is not loaded yet, then answer sample questions
# (with how each answer was found) and a short dialogue, and open the terminal chat when run from
# one. `scripts/demo.sh "QUESTION"` asks that question instead; `scripts/demo.sh --serve` serves
# the web chat (chatty-kg serve) on http://127.0.0.1:8765/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
bin=$(scripts/build.sh)
"$bin" models fetch
if ! "$bin" entities --limit 1 "tom hanks" >/dev/null 2>&1; then
  "$bin" load datasets/metaqa-kb.nt.gz
fi
if [ "${1:-}" = "--serve" ]; then
  echo "== the web chat on the same KB and model: open http://127.0.0.1:8765/ (Ctrl-C stops)" >&2
  exec "$bin" serve
fi
if [ $# -gt 0 ]; then
  exec "$bin" ask --explain "$*"
fi
echo "== questions, each with how its answer was found" >&2
printf '%s\n' \
  "Who directed Ratcatcher?" \
  "What movies did Tom Hanks star in?" \
  "When was The Grudge released?" \
  "Who directed Zorblax Quintrell?" |
  "$bin" ask --explain --questions -
echo "== a dialogue: the second question refers back to the first answer" >&2
printf '%s\n' "Who directed Ratcatcher?" "What else did she direct?" "/explain" | "$bin" chat
echo "== in a browser: scripts/demo.sh --serve, then open http://127.0.0.1:8765/" >&2
if [ -t 0 ]; then
  echo "== your turn (Ctrl-D or /quit ends)" >&2
  exec "$bin" chat
fi
