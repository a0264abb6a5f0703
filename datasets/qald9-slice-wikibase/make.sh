#!/bin/sh
# Writes the QALD-9 train slice (../shared/datasets/qald9-slice, which may not be copied into the
# project) in both Wikibase shapes into DIR/wikidata and DIR/private, and checks them:
#
#     datasets/qald9-slice-wikibase/make.sh [DIR]        # default /var/tmp/qald9-slice-wikibase
#
# Run from the project's root; needs the venv of datasets/README.md (pyoxigraph):
#     python3 -m venv /var/tmp/dsvenv && /var/tmp/dsvenv/bin/pip install pyoxigraph
# SHARED and PYTHON may be set to other paths. Exits non-zero when reshape.py drops more than 2%
# of the questions.
set -eu
OUT=${1:-/var/tmp/qald9-slice-wikibase}
SHARED=${SHARED:-../shared/datasets/qald9-slice}
PYTHON=${PYTHON:-/var/tmp/dsvenv/bin/python}
HERE=$(dirname "$0")
for numbering in wikidata private; do
    "$PYTHON" "$HERE/../wikibase/reshape.py" --kb "$SHARED/train-kb.nt.gz" \
        --questions "$SHARED/train.json" --numbering "$numbering" --descriptions \
        --out "$OUT/$numbering"
done
