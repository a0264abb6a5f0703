#!/usr/bin/env bash
# The scale benchmark: one question set with gold on its own graph, then the same graph inside
# larger ones (made-up encyclopaedia data from generate.py around it), each loaded into a fresh
# embedded store and evaluated with the default embedded model. Per size it records the load
# (seconds, peak RSS, store size) and the eval (F1, p50/p95, SPARQL queries per question, query
# timeouts, the slowest candidate query); report.py writes the table and the plot.
#
#   scripts/scale/run.sh [TOTAL_TRIPLES...]      default: 0 1000000 10000000 (0: the graph alone)
#
# Environment: CHATTY_KG (the binary; default: scripts/build.sh's), SCALE_WORK (stores and
# generated files; default /var/tmp/chatty-kg-scale, needs about 3 GB per 10 M triples),
# SCALE_OUT (default reports/scale), SCALE_QUESTIONS and SCALE_KB (default: the Debian packages
# dev set and its graph).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${CHATTY_KG:-$(scripts/build.sh)}
WORK=${SCALE_WORK:-/var/tmp/chatty-kg-scale}
OUT=${SCALE_OUT:-reports/scale}
QUESTIONS=${SCALE_QUESTIONS:-datasets/debian-packages/questions.json}
KB=${SCALE_KB:-datasets/debian-packages/kb.nt.gz}
mkdir -p "$WORK" "$OUT"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(0 1000000 10000000)
kb_triples=$(gzip -cdf "$KB" | grep -c '^[<_]')
for size in "${sizes[@]}"; do
    files=("$KB")
    if [ "$size" -gt "$kb_triples" ]; then
        world="$WORK/world-$size.nt"
        [ -f "$world" ] || python3 scripts/scale/generate.py $((size - kb_triples)) "$world"
        files+=("$world")
    fi
    store="$WORK/store-$size"
    rm -rf "$store"
    echo "== $size: loading ${files[*]}" >&2
    /usr/bin/time -f '%e %M' -o "$WORK/load-$size.time" "$BIN" load --store "$store" "${files[@]}" 2> "$WORK/load-$size.log"
    read -r seconds rss_kb < "$WORK/load-$size.time"
    triples=$(grep -o 'now holds [0-9]*' "$WORK/load-$size.log" | grep -o '[0-9]*$')
    store_kb=$(du -sk "$store" | cut -f1)
    mkdir -p "$OUT/$size"
    printf 'triples\tload_seconds\tload_peak_rss_kb\tstore_kb\n%s\t%s\t%s\t%s\n' \
        "$triples" "$seconds" "$rss_kb" "$store_kb" > "$OUT/$size/load.tsv"
    echo "== $size: $triples triples in $seconds s; evaluating" >&2
    "$BIN" eval "$QUESTIONS" --store "$store" --out "$OUT/$size" --quiet
done
python3 scripts/scale/report.py "$OUT"
