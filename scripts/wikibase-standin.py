#!/usr/bin/env python3
"""Local stand-ins for a Wikibase's search services, for tests and evaluations without internet.

    wikibase-standin.py --sparql http://127.0.0.1:PORT/sparql [--labels KB.nt[.gz]] [--port N] [--log FILE]

Serves on 127.0.0.1 (a free port unless --port; the first line printed is the base URL):

The labels searched are the graph's (`rdfs:label`, `skos:altLabel`, `schema:description`), read
from the N-Triples file --labels names or, without it, asked of the endpoint once at start.

- `GET /w/api.php?action=wbsearchentities&search=…&language=…&limit=…&format=json` answers as a
  Wikibase's `wbsearchentities` does: the items whose label or alias (`rdfs:label`,
  `skos:altLabel`, in any language) begins with the search text, case and accents ignored,
  exact matches first, then shorter labels; `{"search": [{"id", "concepturi", "label",
  "description", "match": {…}}]}`.
- `/sparql` (GET or POST, as a SPARQL endpoint) answers a query that calls the Wikidata Query
  Service's `SERVICE wikibase:mwapi` with `wikibase:api "EntitySearch"` itself, from the same
  search (the `?item` and `?label` outputs and the ordinal), and forwards every other query to the
  real endpoint given by --sparql (Virtuoso), unchanged, returning its answer.

With --log, every query the stand-in receives is appended to FILE (one JSON line each: kind,
and whether it has REGEX), so a run can show which searches it sent. Standard library only.
"""

import argparse
import gzip
import json
import re
import sys
import unicodedata
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
ALT = "http://www.w3.org/2004/02/skos/core#altLabel"
DESCRIPTION = "http://schema.org/description"
PROPERTY = "http://wikiba.se/ontology#Property"
TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
TRIPLE = re.compile(r'^<([^>]*)>\s+<([^>]*)>\s+(.*?)\s*\.\s*$')
LITERAL = re.compile(r'^"((?:[^"\\]|\\.)*)"(?:@([A-Za-z0-9-]+)|\^\^<[^>]*>)?$')


def fold(text):
    """Lower case without accents, spaces collapsed: what the search compares."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return " ".join(text.lower().split())


def unescape(value):
    return json.loads('"' + value + '"') if "\\" in value else value


def fetch_labels(sparql):
    """The same as read_labels, asked of the endpoint itself (paged: an endpoint caps its rows)."""
    items, properties = {}, set()
    page, offset = 10000, 0
    query = (
        "SELECT ?s ?p ?o WHERE { ?s ?p ?o FILTER(?p IN (<%s>, <%s>, <%s>) || (?p = <%s> && ?o = <%s>)) } "
        "LIMIT %d OFFSET %d"
    )
    while True:
        q = query % (LABEL, ALT, DESCRIPTION, TYPE, PROPERTY, page, offset)
        data = urllib.parse.urlencode({"query": q}).encode("utf-8")
        request = urllib.request.Request(sparql, data=data, headers={"Accept": "application/sparql-results+json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            rows = json.load(response)["results"]["bindings"]
        for row in rows:
            s, p, o = row["s"]["value"], row["p"]["value"], row["o"]
            if p == TYPE:
                properties.add(s)
                continue
            if o.get("type") not in ("literal", "typed-literal"):
                continue
            entry = items.setdefault(s, {"labels": [], "aliases": [], "description": {}})
            lang = o.get("xml:lang", "")
            if p == LABEL:
                entry["labels"].append((o["value"], lang))
            elif p == ALT:
                entry["aliases"].append((o["value"], lang))
            else:
                entry["description"][lang] = o["value"]
        if len(rows) < page:
            break
        offset += page
    for p in properties:
        items.pop(p, None)
    return items


def read_labels(path):
    """item IRI → {"labels": [(text, lang)], "aliases": [...], "description": {lang: text}};
    property entities left out (wbsearchentities searches items unless asked for properties)."""
    items, properties = {}, set()
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            m = TRIPLE.match(line)
            if not m:
                continue
            s, p, o = m.groups()
            if p == TYPE and o == f"<{PROPERTY}>":
                properties.add(f"{s}")
                continue
            if p not in (LABEL, ALT, DESCRIPTION):
                continue
            lit = LITERAL.match(o)
            if not lit:
                continue
            text, lang = unescape(lit.group(1)), lit.group(2) or ""
            entry = items.setdefault(s, {"labels": [], "aliases": [], "description": {}})
            if p == LABEL:
                entry["labels"].append((text, lang))
            elif p == ALT:
                entry["aliases"].append((text, lang))
            else:
                entry["description"][lang] = text
    for p in properties:
        items.pop(p, None)
    return items


class Search:
    def __init__(self, items):
        self.items = items
        # (folded text, item, text, language, is alias), sorted for prefix lookups.
        self.index = sorted(
            (fold(text), iri, text, lang, alias)
            for iri, entry in items.items()
            for alias, texts in ((False, entry["labels"]), (True, entry["aliases"]))
            for text, lang in texts
        )

    def find(self, text, language, limit):
        import bisect

        wanted = fold(text)
        if not wanted:
            return []
        start = bisect.bisect_left(self.index, (wanted,))
        best = {}
        for folded, iri, label, lang, alias in self.index[start:]:
            if not folded.startswith(wanted):
                break
            rank = (folded != wanted, lang not in (language, ""), alias, len(label), iri)
            if iri not in best or rank < best[iri][0]:
                best[iri] = (rank, label, lang, alias)
        ranked = sorted(best.items(), key=lambda kv: kv[1][0])[:limit]
        out = []
        for iri, (_, matched, lang, alias) in ranked:
            entry = self.items[iri]
            shown = next((t for t, l in entry["labels"] if l == language), None)
            shown = shown or next((t for t, l in entry["labels"] if l == "en"), None) or matched
            out.append(
                {
                    "id": iri.rsplit("/", 1)[-1],
                    "concepturi": iri,
                    "label": shown,
                    "description": entry["description"].get(language) or entry["description"].get("en", ""),
                    "match": {"type": "alias" if alias else "label", "language": lang, "text": matched},
                }
            )
        return out


MWAPI_SEARCH = re.compile(r'mwapi:search\s+"((?:[^"\\]|\\.)*)"|<https://www\.mediawiki\.org/ontology#API/search>\s+"((?:[^"\\]|\\.)*)"')
MWAPI_LANGUAGE = re.compile(r'(?:mwapi:language|<https://www\.mediawiki\.org/ontology#API/language>)\s+"([^"]*)"')
LIMIT = re.compile(r"LIMIT\s+(\d+)", re.IGNORECASE)


def make_handler(search, sparql, log):
    def note(kind, query=""):
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"kind": kind, "regex": "regex(" in query.lower(), "bytes": len(query)}) + "\n")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def reply(self, status, body, content_type):
            data = body.encode("utf-8") if isinstance(body, str) else body
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def params(self):
            url = urllib.parse.urlparse(self.path)
            params = urllib.parse.parse_qs(url.query)
            if self.command == "POST":
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length).decode("utf-8")
                params.update(urllib.parse.parse_qs(body))
            return url.path, {k: v[-1] for k, v in params.items()}

        def do_GET(self):
            self.handle_any()

        def do_POST(self):
            self.handle_any()

        def handle_any(self):
            path, params = self.params()
            if path == "/w/api.php":
                if params.get("action") != "wbsearchentities" or "search" not in params:
                    return self.reply(400, json.dumps({"error": {"code": "badvalue"}}), "application/json")
                note("wbsearchentities")
                limit = min(int(params.get("limit", "7") or 7), 50)
                found = search.find(params["search"], params.get("language", "en"), limit)
                return self.reply(200, json.dumps({"searchinfo": {"search": params["search"]}, "search": found, "success": 1}), "application/json")
            if path == "/sparql":
                query = params.get("query", "")
                if "EntitySearch" in query and ("wikibase:mwapi" in query or "wikiba.se/ontology#mwapi" in query):
                    return self.mwapi(query)
                note("sparql", query)
                return self.forward(query)
            self.reply(404, "not found", "text/plain")

        def mwapi(self, query):
            note("mwapi")
            m = MWAPI_SEARCH.search(query)
            if not m:
                return self.reply(400, "no mwapi:search", "text/plain")
            text = unescape(m.group(1) or m.group(2))
            lang = MWAPI_LANGUAGE.search(query)
            limit = LIMIT.search(query)
            found = search.find(text, lang.group(1) if lang else "en", int(limit.group(1)) if limit else 50)
            rows = [
                {
                    "item": {"type": "uri", "value": f["concepturi"]},
                    "label": {"type": "literal", "value": f["label"]},
                    "num": {"type": "literal", "value": str(i), "datatype": "http://www.w3.org/2001/XMLSchema#integer"},
                }
                for i, f in enumerate(found)
            ]
            body = {"head": {"vars": ["item", "label", "num"]}, "results": {"bindings": rows}}
            self.reply(200, json.dumps(body), "application/sparql-results+json")

        def forward(self, query):
            data = urllib.parse.urlencode({"query": query}).encode("utf-8")
            accept = self.headers.get("Accept", "application/sparql-results+json")
            request = urllib.request.Request(sparql, data=data, headers={"Accept": accept, "Content-Type": "application/x-www-form-urlencoded"})
            try:
                with urllib.request.urlopen(request, timeout=120) as response:
                    body = response.read()
                    self.reply(response.status, body, response.headers.get("Content-Type", accept))
            except urllib.error.HTTPError as e:
                self.reply(e.code, e.read(), e.headers.get("Content-Type", "text/plain"))
            except Exception as e:  # noqa: BLE001
                self.reply(502, str(e), "text/plain")

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labels", help="the graph (N-Triples, .gz too) whose labels are searched; unset: asked of --sparql")
    parser.add_argument("--sparql", required=True, help="the real SPARQL endpoint other queries go to")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", help="append each query received to this file (JSON lines)")
    args = parser.parse_args()
    search = Search(read_labels(args.labels) if args.labels else fetch_labels(args.sparql))
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(search, args.sparql, args.log))
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
