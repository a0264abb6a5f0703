#!/usr/bin/env bash
# The feedback experiment of reports/README.md ("Answers that learn from feedback"): for each of
# the QALD-9 train slice and the LC-QuAD dev slice, feed the first half's feedback through the
# real API (scripts/feedback-experiment.py), then score the second half without and with the
# examples it made. Usage: scripts/feedback-experiment.sh [BINARY] [DATASETS] (defaults: the debug
# build, ../shared/datasets). Results in reports/feedback-{qald9,lcquad}/{before,after}.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-${CARGO_TARGET_DIR:-target}/debug/chatty-kg}
data=${2:-../shared/datasets}
run() {
  local name=$1 file=$2 kb=$3 port=$4 work
  work=$(mktemp -d)
  python3 scripts/feedback-experiment.py "$file" --kb "$kb" --work "$work" --binary "$bin" --seed 1 --port "$port"
  mkdir -p "reports/$name"
  cp "$work/examples.json" "$work/feedback.json" "reports/$name/"
  rm -rf "reports/$name/before" "reports/$name/after"
  "$bin" eval "$work/second.json" --kb "$kb" --out "reports/$name/before" --quiet
  "$bin" eval "$work/second.json" --kb "$kb" --examples "$work/examples.json" --out "reports/$name/after" --quiet
  rm -rf "$work"
}
run feedback-qald9 "$data/qald9-slice/train.json" "$data/qald9-slice/train-kb.nt.gz" 18765
run feedback-lcquad "$data/lcquad-slice/dev.json" "$data/lcquad-slice/dev-kb.nt.gz" 18766
