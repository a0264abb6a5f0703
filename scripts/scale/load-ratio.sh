#!/usr/bin/env bash
# `chatty-kg load` against Oxigraph's own bulk loader on the same file: whole processes, run
# alternately, medians. Ours is everything a user waits for before the first question (parse,
# write, label index, counts, profile, and past four million quads the compaction); Oxigraph's
# is pyoxigraph's `Store.bulk_load` (a release build of the same Oxigraph version as
# Cargo.lock's), alone and followed by `Store.optimize()` (the same compaction).
#
#   scripts/scale/load-ratio.sh FILE [RUNS]       default RUNS: 3
#
# Environment: CHATTY_KG (default: scripts/build.sh's binary), CHATTY_KG_RELEASE (a second binary,
# e.g. `cargo build --release`'s, measured in the same rounds; optional), SCALE_WORK (scratch
# stores and the pyoxigraph virtualenv; default /var/tmp/chatty-kg-scale). Prints a Markdown table
# row per binary.
set -euo pipefail
cd "$(dirname "$0")/../.."
FILE=$(realpath "$1")
RUNS=${2:-3}
BIN=${CHATTY_KG:-$(scripts/build.sh)}
WORK=${SCALE_WORK:-/var/tmp/chatty-kg-scale}
mkdir -p "$WORK"
version=$(grep -A1 '^name = "oxigraph"$' Cargo.lock | sed -n 's/^version = "\(.*\)"/\1/p')
venv="$WORK/pyoxigraph-$version"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "pyoxigraph==$version"
fi
case "$FILE" in
    *.nt | *.nt.gz | *.nt.bz2 | *.nt.zst) format=N_TRIPLES ;;
    *.ttl | *.ttl.gz) format=TURTLE ;;
    *) echo "load-ratio.sh: use an N-Triples or Turtle file" >&2; exit 2 ;;
esac
cat > "$WORK/ratio-oxigraph.py" <<'EOF'
import shutil, sys, pyoxigraph
path, store, fmt, optimize = sys.argv[1:]
shutil.rmtree(store, ignore_errors=True)
s = pyoxigraph.Store(store)
s.bulk_load(path=path, format=getattr(pyoxigraph.RdfFormat, fmt))
s.flush()
if optimize == "1":
    s.optimize()
EOF
oxigraph=("$venv/bin/python" "$WORK/ratio-oxigraph.py" "$FILE" "$WORK/ratio-oxigraph" "$format")
timed() { # prints wall seconds of "$@"
    /usr/bin/time -f '%e' -o "$WORK/ratio.time" "$@" > /dev/null 2>&1
    cat "$WORK/ratio.time"
}
bins=("$BIN")
[ -n "${CHATTY_KG_RELEASE:-}" ] && bins+=("$CHATTY_KG_RELEASE")
declare -A ours
bulk=() optimized=()
for _ in $(seq "$RUNS"); do
    for i in "${!bins[@]}"; do
        rm -rf "$WORK/ratio-ours"
        ours[$i]+=" $(timed "${bins[$i]}" load --store "$WORK/ratio-ours" "$FILE")"
    done
    bulk+=("$(timed "${oxigraph[@]}" 0)")
    optimized+=("$(timed "${oxigraph[@]}" 1)")
done
triples=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['loads'][-1]['parsed'])" "$WORK/ratio-ours/manifest.json")
rm -rf "$WORK/ratio-ours" "$WORK/ratio-oxigraph" "$WORK/ratio-oxigraph.py"
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
m_bulk=$(median "${bulk[@]}") m_opt=$(median "${optimized[@]}")
for i in "${!bins[@]}"; do
    # shellcheck disable=SC2086 # the times, one word each
    m_ours=$(median ${ours[$i]})
    echo "| $(basename "$FILE") | $triples | $RUNS | $m_ours | $m_bulk | $m_opt | $(python3 -c "print(f'{$m_ours / $m_bulk:.2f}')") | $(python3 -c "print(f'{$m_ours / $m_opt:.2f}')") | ${bins[$i]} |"
done
