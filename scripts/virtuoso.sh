#!/usr/bin/env bash
# A private Virtuoso 7.2.5 on loopback for the backend tests (recipe: shared/VIRTUOSO.md).
#   scripts/virtuoso.sh start DIR FILE...   start in DIR, load FILEs, print the SPARQL URL
#   scripts/virtuoso.sh stop DIR            shut it down
# VIRTUOSO_MEMORY_GB=N sizes its buffers for N GB of free memory (Virtuoso's own table: 85 000
# buffers per GB, 3/4 of them dirty at most); unset, the package's small default (a test graph).
# Needs the Debian package virtuoso-opensource (virtuoso-t, isql-vt).
set -euo pipefail
cmd=${1:?usage: virtuoso.sh start DIR FILE... | stop DIR}
dir=$(realpath -m "${2:?directory}")
shift 2

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

case "$cmd" in
start)
  command -v virtuoso-t >/dev/null || { echo "virtuoso-t not found (apt-get install virtuoso-opensource)" >&2; exit 3; }
  rm -rf "$dir"; mkdir -p "$dir/db" "$dir/data"
  sql_port=$(free_port); http_port=$(free_port)
  cp /etc/virtuoso-opensource-7/virtuoso.ini "$dir/"
  sed -i "s#/var/lib/virtuoso-opensource-7/db/#$dir/db/#g; s#^ServerPort.*1111#ServerPort = 127.0.0.1:$sql_port#; \
          s#^ServerPort.*8890#ServerPort = 127.0.0.1:$http_port#; \
          s#^DirsAllowed.*#DirsAllowed = ., $dir, /usr/share/virtuoso-opensource-7/vad#" "$dir/virtuoso.ini"
  if [ -n "${VIRTUOSO_MEMORY_GB:-}" ]; then
    buffers=$((VIRTUOSO_MEMORY_GB * 85000))
    sed -i "s#^NumberOfBuffers.*#NumberOfBuffers = $buffers#; s#^MaxDirtyBuffers.*#MaxDirtyBuffers = $((buffers * 3 / 4))#" "$dir/virtuoso.ini"
  fi
  # Large files are linked, not copied (a DBpedia release is tens of GB).
  for f in "$@"; do ln "$f" "$dir/data/" 2>/dev/null || cp "$f" "$dir/data/"; done
  (cd "$dir" && virtuoso-t +configfile "$dir/virtuoso.ini" +wait) >"$dir/start.log" 2>&1 \
    || { cat "$dir/start.log" >&2; exit 1; }
  echo "$sql_port" > "$dir/sql.port"
  isql-vt "$sql_port" dba dba exec="ld_dir('$dir/data', '*', 'http://example.org/graph'); rdf_loader_run(); checkpoint; \
    DB.DBA.RDF_OBJ_FT_RULE_ADD(null, null, 'index_local'); DB.DBA.VT_INC_INDEX_DB_DBA_RDF_OBJ(); checkpoint;" \
    >"$dir/load.log" 2>&1 || { cat "$dir/load.log" >&2; exit 1; }
  # ld_dir records per-file errors instead of failing: make them fatal.
  errors=$(isql-vt "$sql_port" dba dba exec="SELECT ll_file, ll_error FROM DB.DBA.LOAD_LIST WHERE ll_error IS NOT NULL;" | grep -c "$dir/data" || true)
  if [ "$errors" != "0" ]; then
    isql-vt "$sql_port" dba dba exec="SELECT ll_file, ll_error FROM DB.DBA.LOAD_LIST;" >&2; exit 1
  fi
  echo "http://127.0.0.1:$http_port/sparql"
  ;;
stop)
  if [ -f "$dir/sql.port" ]; then
    isql-vt "$(cat "$dir/sql.port")" dba dba exec="shutdown;" >/dev/null 2>&1 || true
  fi
  ;;
*) echo "unknown command $cmd" >&2; exit 2 ;;
esac
