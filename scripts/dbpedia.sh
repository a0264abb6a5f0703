#!/usr/bin/env bash
# QALD-9 and LC-QuAD 1.0 as their papers ran them: against the DBpedia release each was made on
# (QALD-9: 2016-10; LC-QuAD 1.0: 2016-04), in a private Virtuoso, with `chatty-kg eval --endpoint`.
#
#   scripts/dbpedia.sh fetch RELEASE DIR           download the release's English core files into DIR
#   scripts/dbpedia.sh serve DIR VDIR              start a private Virtuoso in VDIR loaded with DIR; print its SPARQL URL
#   scripts/dbpedia.sh eval URL OUT QUESTIONS...   `chatty-kg eval --endpoint URL` on each QALD/LC-QuAD file, into OUT/<name>
#   scripts/dbpedia.sh stop VDIR                   shut the Virtuoso down
#   scripts/dbpedia.sh all RELEASE WORK QUESTIONS...   fetch, serve, eval (into WORK/reports), stop
#
# RELEASE is a DBpedia release (2016-10, 2016-04, …). Its files come from DBPEDIA_DOWNLOADS
# (default https://downloads.dbpedia.org, the releases' archive that the DBpedia Databus
# collections point to for these years), `RELEASE/core-i18n/en/FILE`; DBPEDIA_FILES replaces the
# default list (labels, types, mapping-based objects and literals, raw infobox properties,
# categories and their labels). A file already in DIR is not fetched again, and a cut download
# resumes (curl -C -). Virtuoso's bulk loader reads the .ttl.bz2 files as they are.
# Needs curl, virtuoso-opensource (virtuoso-t, isql-vt) and a built chatty-kg (CHATTY_KG_BIN, else
# scripts/build.sh). Disk, memory and hours: docs/evaluation.md, "QALD-9 and LC-QuAD on DBpedia".
# Load time, estimated (no release could be fetched here): the eight files hold ~150 M triples.
# The private Virtuoso loaded the scale benchmark's 10 M triples with its free-text index in
# 5.5 minutes (30 K triples/s, 4 GB of buffers; reports/scale): about 1.5 hours for 150 M at
# that rate, more as the database outgrows its buffers. `chatty-kg load` into the embedded
# store took 78 s for the same 10 M (126 K triples/s, 98a528c; reports/scale), at least 20 minutes
# for 150 M and more as the store outgrows the page cache, but the
# embedded store is not meant for a whole DBpedia (docs/operations.md, "How big a graph the
# embedded store is for").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:?usage: dbpedia.sh fetch|serve|eval|stop|all ...}
shift

downloads=${DBPEDIA_DOWNLOADS:-https://downloads.dbpedia.org}
files=${DBPEDIA_FILES:-labels_en.ttl.bz2 instance_types_en.ttl.bz2 instance_types_transitive_en.ttl.bz2 \
mappingbased_objects_en.ttl.bz2 mappingbased_literals_en.ttl.bz2 infobox_properties_en.ttl.bz2 \
article_categories_en.ttl.bz2 category_labels_en.ttl.bz2}

fetch() {
  local release=${1:?release, e.g. 2016-10} dir=${2:?directory}
  mkdir -p "$dir"
  for f in $files; do
    if [ -s "$dir/$f" ] && [ ! -e "$dir/$f.part" ]; then
      echo "$f: already here" >&2
      continue
    fi
    echo "$f: fetching $downloads/$release/core-i18n/en/$f" >&2
    touch "$dir/$f.part"
    curl --fail --location --retry 3 --continue-at - --output "$dir/$f" "$downloads/$release/core-i18n/en/$f"
    rm -f "$dir/$f.part"
  done
  echo "$release: $(du -sh "$dir" | cut -f1) in $dir" >&2
}

serve() {
  local dir=${1:?directory of the release files} vdir=${2:?directory for Virtuoso}
  # scripts/virtuoso.sh loads every file given, as the backend tests do.
  "$here/virtuoso.sh" start "$vdir" "$dir"/*
}

evaluate() {
  local url=${1:?SPARQL endpoint URL} out=${2:?reports directory}
  shift 2
  [ $# -gt 0 ] || { echo "give at least one QALD-JSON or LC-QuAD file" >&2; exit 2; }
  local bin=${CHATTY_KG_BIN:-$("$here/build.sh")}
  mkdir -p "$out"
  for questions in "$@"; do
    local name
    name=$(basename "$questions" .json)
    echo "== $name on $url" >&2
    "$bin" eval "$questions" --endpoint "$url" --out "$out/$name"
  done
}

case "$cmd" in
fetch) fetch "$@" ;;
serve) serve "$@" ;;
eval) evaluate "$@" ;;
stop) "$here/virtuoso.sh" stop "${1:?directory for Virtuoso}" ;;
all)
  release=${1:?release} work=${2:?work directory}
  shift 2
  fetch "$release" "$work/files"
  url=$(serve "$work/files" "$work/virtuoso")
  trap '"$here/virtuoso.sh" stop "$work/virtuoso"' EXIT
  evaluate "$url" "$work/reports" "$@"
  ;;
*) echo "unknown command $cmd" >&2; exit 2 ;;
esac
