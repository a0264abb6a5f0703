#!/usr/bin/env bash
# The attack queries of tests/fixtures/attacks/ (issue 46) from the CLI on the bundled MetaQA
# store, under a 2 GB address-space limit and a 5 s query timeout: exit code, wall time (how
# long after the timeout the command ended: the worker is killed and reaped before it returns),
# peak RSS of the CLI and its worker (GNU time's maximum resident set size of the process tree it
# waited for). Usage: reports/bounds-46/measure.sh [BINARY] > reports/bounds-46/cli.tsv
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-${CARGO_TARGET_DIR:-target}/debug/chatty-kg}
store=$(mktemp -d)/store
"$bin" load --store "$store" datasets/metaqa-kb.nt.gz >/dev/null 2>&1
config=$(mktemp)
printf '[kgs.default]\nstore = "%s"\n[kgs.default.graph]\nquery_timeout_secs = 5\n' "$store" > "$config"
printf 'query\texit\tseconds\tpeak RSS (MB)\tfirst line of stderr\n'
for f in tests/fixtures/attacks/*.rq; do
  out=$(mktemp)
  set +e
  ( ulimit -v 2097152; /usr/bin/time -f "%e %M" -o "$out.time" "$bin" --config "$config" sparql --kg default "$(cat "$f")" >/dev/null 2>"$out" )
  code=$?
  set -e
  read -r seconds kb < <(tail -1 "$out.time")
  printf '%s\t%s\t%s\t%s\t%s\n' "$(basename "$f" .rq)" "$code" "$seconds" "$((kb / 1024))" "$(head -1 "$out")"
done
