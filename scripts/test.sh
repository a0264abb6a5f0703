#!/usr/bin/env bash
# The project's test command (README, .ci/run): starts a private Virtuoso on loopback when it is
# installed, loaded with tests/fixtures/movies.ttl, runs every test of the workspace, stops it.
# Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
cleanup() { scripts/virtuoso.sh stop "$scratch/virtuoso" || true; rm -rf "$scratch"; }
trap cleanup EXIT
if command -v virtuoso-t >/dev/null; then
  CHATTY_KG_TEST_VIRTUOSO=$(scripts/virtuoso.sh start "$scratch/virtuoso" tests/fixtures/movies.ttl)
  export CHATTY_KG_TEST_VIRTUOSO
  echo "Virtuoso for the backend suite: $CHATTY_KG_TEST_VIRTUOSO" >&2
else
  echo "!!! virtuoso-t is not installed: the Virtuoso backend tests will SKIP (apt-get install virtuoso-opensource)" >&2
fi
cargo test --workspace "$@"
