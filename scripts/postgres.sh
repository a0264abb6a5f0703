#!/usr/bin/env bash
# A private PostgreSQL on loopback for the shared-session tests (server.sessions_url).
#   scripts/postgres.sh start DIR   start a fresh cluster in DIR, print its URL:
#                                   postgres://chatty@127.0.0.1:PORT/chatty
#   scripts/postgres.sh stop DIR    shut it down (fast: open sessions are disconnected)
# Database `chatty` owned by the login role `chatty` (which may create more databases, e.g. one
# per test), no password: trust authentication for the unix socket (in DIR, not
# /var/run/postgresql) and for 127.0.0.1/::1; it listens on 127.0.0.1 only, on a free port. No
# TLS (ssl = off), so clients connect without it (tokio-postgres NoTls).
# Layout: DIR/data (the cluster), DIR/postgres.log (initdb and server log), DIR/.s.PGSQL.PORT
# (keep DIR short: a socket path has at most 107 bytes).
# Needs the Debian package postgresql (binaries in /usr/lib/postgresql/N/bin; the newest wins,
# or set PG_BINDIR). initdb and postgres refuse to run as root: as root (CI) they run as the
# `postgres` system user that the package creates, and DIR is handed to that user.
set -euo pipefail
cmd=${1:?usage: postgres.sh start DIR | stop DIR}
dir=$(realpath -m "${2:?directory}")
log=$dir/postgres.log

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

bindir() {
  local d
  if [ -n "${PG_BINDIR:-}" ]; then echo "$PG_BINDIR"; return; fi
  # The newest server installed (pg_config may come from libpq-dev of another version).
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/initdb" ] && { echo "$d"; return; }
  done
  d=$(pg_config --bindir 2>/dev/null || true)
  [ -n "$d" ] && [ -x "$d/initdb" ] && { echo "$d"; return; }
  command -v initdb >/dev/null && { dirname "$(readlink -f "$(command -v initdb)")"; return; }
  return 1
}

root=0
[ "$(id -u)" -eq 0 ] && root=1
# Runs a command as the user that owns the cluster: ourselves, or `postgres` when we are root.
as_pg() {
  if [ "$root" = 0 ]; then "$@"
  elif command -v runuser >/dev/null; then runuser -u postgres -- "$@"
  else su postgres -s /bin/bash -c "$(printf '%q ' "$@")"; fi
}

stop_cluster() {
  local b
  [ -f "$dir/data/postmaster.pid" ] || return 0
  b=$(bindir) || return 0
  (cd "$dir" && as_pg "$b/pg_ctl" stop -D "$dir/data" -m fast -w -t 60) >/dev/null 2>&1 || true
}

case "$cmd" in
start)
  bin=$(bindir) || { echo "PostgreSQL's initdb not found (apt-get install postgresql)" >&2; exit 3; }
  if [ "$root" = 1 ] && ! id postgres >/dev/null 2>&1; then
    echo "running as root but there is no 'postgres' user to run the server as (apt-get install postgresql)" >&2
    exit 3
  fi
  stop_cluster   # one left running there
  rm -rf "$dir"; mkdir -p "$dir"; : >"$log"
  if [ "$root" = 1 ]; then
    # The postgres user must reach DIR. Temporary directories are often private to root
    # (mktemp -d makes them 0700, as scripts/test.sh's scratch directory is). Ancestors that block
    # it get search permission for others (o+x: pass through by exact name, not list), but only
    # when they are inside a temporary directory (/tmp, /var/tmp, $TMPDIR), never the temporary
    # directory itself or anything outside; elsewhere we stop and ask for another DIR rather than
    # open up, say, /root.
    tmp_roots=()
    for t in /tmp /var/tmp "${TMPDIR:-/tmp}"; do [ -d "$t" ] && tmp_roots+=("$(realpath "$t")"); done
    ancestors=()
    p=$(dirname "$dir")
    while [ "$p" != / ]; do ancestors=("$p" "${ancestors[@]}"); p=$(dirname "$p"); done
    for p in "${ancestors[@]}"; do   # from the top down: a blocked parent hides its children
      as_pg test -x "$p" && continue
      fixable=0
      for t in "${tmp_roots[@]}"; do case "$p" in "$t"/*) fixable=1 ;; esac; done
      if [ "$fixable" = 1 ]; then
        chmod o+x "$p"
        echo "postgres.sh: gave others search permission (o+x) on $p so that the postgres user reaches $dir" >&2
      else
        echo "the postgres user cannot reach $dir: $p is not searchable by it; use a DIR under /tmp" >&2
        exit 1
      fi
    done
    chown -R postgres: "$dir"
  fi
  chmod 700 "$dir"
  cd "$dir"   # a working directory the postgres user can enter (initdb and pg_ctl look at it)
  fail() {
    echo "PostgreSQL did not start; $log:" >&2
    cat "$log" >&2
    as_pg "$bin/pg_ctl" stop -D "$dir/data" -m immediate >/dev/null 2>&1 || true
    exit 1
  }
  as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --no-locale \
    >>"$log" 2>&1 || fail
  port=$(free_port)
  # initdb's pg_hba.conf with --auth=trust: trust for local sockets, 127.0.0.1/32 and ::1/128.
  cat >>"$dir/data/postgresql.conf" <<EOF

# scripts/postgres.sh: private, loopback only
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
ssl = off
fsync = on
# Room for several test servers at once, each with its own connection pool.
max_connections = 200
EOF
  as_pg "$bin/pg_ctl" start -D "$dir/data" -l "$log" -w -t 60 >>"$log" 2>&1 || fail
  "$bin/psql" "postgres://postgres@127.0.0.1:$port/postgres" -X -q -v ON_ERROR_STOP=1 \
    -c "CREATE ROLE chatty LOGIN CREATEDB" -c "CREATE DATABASE chatty OWNER chatty" >>"$log" 2>&1 || fail
  echo "postgres://chatty@127.0.0.1:$port/chatty"
  ;;
stop) stop_cluster ;;
*) echo "unknown command $cmd" >&2; exit 2 ;;
esac
