#!/usr/bin/env python3
"""Re-shapes an RDFS-shaped graph and its QALD-JSON questions into the shape of Wikidata's RDF
dumps ("truthy" direct claims, plus Wikibase statements where --statements gives them), and checks
that every gold query still gives the same answers. Needs pyoxigraph (standard library otherwise):

    python3 -m venv /var/tmp/dsvenv && /var/tmp/dsvenv/bin/pip install pyoxigraph
    /var/tmp/dsvenv/bin/python datasets/wikibase/reshape.py --kb IN.nt.gz --questions IN.json \\
        --numbering wikidata|private --out DIR [--descriptions] [--statements FILE] \\
        [--second-language FILE]

writes DIR/kb.nt.gz (sorted N-Triples, gzip without a timestamp) and DIR/questions.json (and
DIR/questions-de.json when the --second-language file has questions); the same input gives
byte-identical output.

The shape
  * every IRI that is a subject or an IRI object (classes too) becomes an item wd:Q<n>;
  * every predicate but rdf:type, rdfs:subClassOf and rdfs:label becomes a property: the triple is
    the direct claim wdt:P<n>, and the property entity wd:P<n> gets rdf:type wikibase:Property,
    its English label (the predicate's own rdfs:label, else words from its IRI's local name),
    wikibase:directClaim/claim/statementProperty/qualifier and wikibase:propertyType;
  * rdf:type is "instance of", rdfs:subClassOf "subclass of": P31 and P279 with --numbering
    wikidata (other properties avoid those numbers); with --numbering private everything is
    numbered from P1/Q1 in the order first seen in the input, under https://kb.example.org/;
  * untagged rdfs:labels get @en; an item without an English label gets one from its IRI
    (last path segment, percent-decoded, "_" -> " ", class names split into lower-case words);
  * --descriptions: each instance gets schema:description "<label of its first class>"@en.

--statements FILE (JSON) and --second-language FILE (JSON) add input-side triples after the
graph's own (so the numbering of everything else does not change) and questions:
  {"turtle": ["@prefix ...", "<s> <p> <o> .", ...], "questions": [QALD questions]}  (--statements)
  {"labels": {"IRI": "label", ...}, "language": "de",
   "questions": [{"id": "<id of an English question>", "string": "..."}]}  (--second-language)
Statements are written in a small input-side vocabulary that maps one to one onto Wikibase's:
  <item> <urn:reshape:p:PRED> <urn:reshape:s:KEY>      -> wd:Q p:P wds:Q-UUID
  <urn:reshape:s:KEY> <urn:reshape:ps:PRED> value      -> wds:… ps:P value
  <urn:reshape:s:KEY> <urn:reshape:pq:PRED> value      -> wds:… pq:P value
  <urn:reshape:s:KEY> wikibase:rank wikibase:NormalRank (wikibase: IRIs are kept as they are)
so that the questions over statements are written (and checked) in the input's vocabulary too,
with PREFIX p: <urn:reshape:p:http://example.org/...> and the like.

Questions: every IRI of a gold query (full or prefixed; the query's PREFIXes expanded; string
literals untouched) goes through the same map, by position: a predicate becomes wdt:P<n> (the
keyword `a` and rdf:type wdt:P31, so rdf:type/rdfs:subClassOf* paths follow), a subject or object
wd:Q<n> (wd:P<n> for a property). IRIs that the graph does not have get fresh numbers. A plain
string compared with a label (`rdfs:label "X"`) becomes "X"@en where the input's label "X" is
untagged. `answers` is dropped, every other field kept.

Verification: the original gold query runs on the input (plus the added triples), the rewritten
one on the output; the output's answers are mapped back through the inverse map (an "X"@en label
counts as the input's untagged "X") and compared as multisets. A question whose answers differ is
dropped and listed; the exit status is 1 when more than 2% are dropped.
"""

import argparse
import collections
import gzip
import io
import json
import os
import re
import sys
import uuid
from pathlib import Path
from urllib.parse import unquote

import pyoxigraph as ox

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SUBCLASS = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_STRING = XSD + "string"
WIKIBASE = "http://wikiba.se/ontology#"
SCHEMA_DESCRIPTION = "http://schema.org/description"
EXT = "urn:reshape:"
EXT_P, EXT_PS, EXT_PQ, EXT_S = EXT + "p:", EXT + "ps:", EXT + "pq:", EXT + "s:"
UUID_NS = uuid.UUID("6f1c6b5e-3f3a-5d0e-9c57-2f7a0c1d4b11")

NUMERIC = {XSD + t for t in (
    "integer", "decimal", "double", "float", "int", "long", "short", "byte", "nonNegativeInteger",
    "positiveInteger", "nonPositiveInteger", "negativeInteger", "unsignedInt", "unsignedLong",
    "unsignedShort", "unsignedByte")}
TEMPORAL = {XSD + t for t in ("date", "dateTime", "dateTimeStamp", "gYear", "gYearMonth", "time")}

SPECIAL_NAMES = {RDF_TYPE: "instance of", SUBCLASS: "subclass of"}
WIKIDATA_NUMBERS = {RDF_TYPE: 31, SUBCLASS: 279}


class Namespaces:
    def __init__(self, numbering):
        base = "http://www.wikidata.org/" if numbering == "wikidata" else "https://kb.example.org/"
        self.ns = {
            "wd": base + "entity/",
            "wds": base + "entity/statement/",
            "wdt": base + "prop/direct/",
            "p": base + "prop/",
            "ps": base + "prop/statement/",
            "pq": base + "prop/qualifier/",
            "wikibase": WIKIBASE,
            "schema": "http://schema.org/",
            "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
            "xsd": XSD,
        }
        self.order = ["wd", "wds", "wdt", "p", "ps", "pq", "wikibase", "schema", "rdfs", "xsd"]

    def __getitem__(self, k):
        return self.ns[k]


# ---------------------------------------------------------------------------------------------
# names and labels


def words(local):
    """introducedIn -> introduced in, birth_place -> birth place, elevationM -> elevation m;
    an acronym of two or more capitals keeps its case (ISBN)."""
    local = unquote(local).replace("_", " ").replace("-", " ")
    out = []
    for chunk in local.split():
        for w in re.findall(r"[A-Z]{2,}(?=[A-Z][a-z]|\d|\b|$)|[A-Z]?[a-z]+|[A-Z]|\d+|[^\sA-Za-z\d]+", chunk):
            out.append(w if len(w) > 1 and w.isupper() else w.lower())
    return " ".join(out) or local


def last_segment(iri):
    s = iri
    if "#" in s and not s.endswith("#"):
        s = s.rsplit("#", 1)[1]
    else:
        s = s.rstrip("/#").rsplit("/", 1)[-1]
    if s.startswith("urn:") or ":" in s and "/" not in iri:
        s = s.rsplit(":", 1)[-1]
    return s


def item_label(iri, is_class):
    seg = last_segment(iri)
    if is_class and "_" not in seg and re.search(r"[a-z][A-Z]|^[A-Z][a-z]", seg):
        return words(seg)
    return unquote(seg).replace("_", " ")


# ---------------------------------------------------------------------------------------------
# reading


def read_nt(path):
    data = Path(path).read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    header = []
    for line in data.split(b"\n"):
        if line.startswith(b"#"):
            header.append(line.decode("utf-8"))
        elif line.strip():
            break
    triples = [(q.subject, q.predicate, q.object)
               for q in ox.parse(io.BytesIO(data), format=ox.RdfFormat.N_TRIPLES)]
    return header, triples


def parse_lines(lines, fmt=ox.RdfFormat.N_TRIPLES):
    text = "\n".join(lines) + "\n"
    return [(q.subject, q.predicate, q.object)
            for q in ox.parse(io.BytesIO(text.encode("utf-8")), format=fmt)]


def is_en(lit):
    return lit.language is None or lit.language.lower() in ("en", "en-us", "en-gb")


def kind(term):
    if isinstance(term, ox.NamedNode) or isinstance(term, ox.BlankNode):
        return "WikibaseItem"
    if term.language is None and term.datatype.value in NUMERIC:
        return "Quantity"
    if term.language is None and term.datatype.value in TEMPORAL:
        return "Time"
    return "String"


# ---------------------------------------------------------------------------------------------
# the map


class Reshaper:
    def __init__(self, numbering, triples):
        self.numbering = numbering
        self.ns = Namespaces(numbering)
        self.triples = triples
        self.prop_num = {}      # predicate IRI (or rdf:type / rdfs:subClassOf) -> n
        self.item_num = {}      # item IRI -> n
        self.stmt_iri = {}      # urn:reshape:s:KEY -> output IRI
        self.next_p = 1
        self.next_q = 1
        self.fresh = []         # IRIs the questions use that the graph does not have
        self._number(triples)

    # numbering ---------------------------------------------------------------------------------
    def new_prop(self, key):
        if key in self.prop_num:
            return self.prop_num[key]
        if self.numbering == "wikidata" and key in WIKIDATA_NUMBERS:
            n = WIKIDATA_NUMBERS[key]
        else:
            while self.numbering == "wikidata" and self.next_p in WIKIDATA_NUMBERS.values():
                self.next_p += 1
            n = self.next_p
            self.next_p += 1
        self.prop_num[key] = n
        return n

    def new_item(self, iri):
        if iri not in self.item_num:
            self.item_num[iri] = self.next_q
            self.next_q += 1
        return self.item_num[iri]

    @staticmethod
    def pred_key(iri):
        """The property a predicate IRI stands for, or None (rdfs:label, wikibase:)."""
        if iri == RDFS_LABEL or iri.startswith(WIKIBASE) or iri == SCHEMA_DESCRIPTION:
            return None
        for pre in (EXT_P, EXT_PS, EXT_PQ):
            if iri.startswith(pre):
                return iri[len(pre):]
        return iri

    def _number(self, triples):
        for s, p, o in triples:
            key = self.pred_key(p.value)
            if key is not None:
                self.new_prop(key)
        for s, p, o in triples:
            for t in (s, o):
                if isinstance(t, ox.NamedNode):
                    v = t.value
                    if v in self.prop_num or v.startswith(WIKIBASE) or v.startswith(EXT_S):
                        continue
                    if v in (RDF_TYPE, SUBCLASS):
                        self.new_prop(v)
                        continue
                    self.new_item(v)
        for s, p, o in triples:
            if p.value.startswith(EXT_P) and o.value.startswith(EXT_S) and o.value not in self.stmt_iri:
                subj = self.node(s.value)
                q = subj.rsplit("/", 1)[-1]
                u = str(uuid.uuid5(UUID_NS, o.value[len(EXT_S):])).upper()
                self.stmt_iri[o.value] = self.ns["wds"] + f"{q}-{u}"

    # mapping -----------------------------------------------------------------------------------
    def node(self, iri, fresh_ok=False):
        """Output IRI for an input IRI in subject/object position."""
        if iri.startswith(WIKIBASE) or iri == RDFS_LABEL or iri.startswith(XSD):
            return iri
        if iri in self.stmt_iri:
            return self.stmt_iri[iri]
        if iri in self.prop_num:
            return self.ns["wd"] + f"P{self.prop_num[iri]}"
        if iri not in self.item_num:
            if not fresh_ok:
                raise KeyError(iri)
            self.fresh.append(iri)
        return self.ns["wd"] + f"Q{self.new_item(iri)}"

    def pred(self, iri, fresh_ok=False):
        """Output IRI for an input IRI in predicate position."""
        key = self.pred_key(iri)
        if key is None:
            return iri
        if key not in self.prop_num:
            if not fresh_ok:
                raise KeyError(iri)
            self.fresh.append(key)
        n = self.new_prop(key)
        for pre, ns in ((EXT_P, "p"), (EXT_PS, "ps"), (EXT_PQ, "pq")):
            if iri.startswith(pre):
                return self.ns[ns] + f"P{n}"
        return self.ns["wdt"] + f"P{n}"

    def inverse(self):
        inv = {}
        for key, n in self.prop_num.items():
            inv[self.ns["wd"] + f"P{n}"] = key
            inv[self.ns["wdt"] + f"P{n}"] = key
            inv[self.ns["p"] + f"P{n}"] = EXT_P + key
            inv[self.ns["ps"] + f"P{n}"] = EXT_PS + key
            inv[self.ns["pq"] + f"P{n}"] = EXT_PQ + key
        for iri, n in self.item_num.items():
            inv[self.ns["wd"] + f"Q{n}"] = iri
        for iri, out in self.stmt_iri.items():
            inv[out] = iri
        return inv

    # the graph ---------------------------------------------------------------------------------
    def build(self, descriptions):
        ns = self.ns
        out = set()
        T = lambda s, p, o: out.add(f"{s} {p} {o} .")  # noqa: E731
        N = lambda iri: f"<{iri}>"  # noqa: E731

        en_labels = collections.defaultdict(list)   # input IRI -> English labels
        classes = set()
        types = collections.defaultdict(set)        # item IRI -> class IRIs
        kinds = collections.defaultdict(collections.Counter)
        for s, p, o in self.triples:
            pv = p.value
            if pv == RDFS_LABEL and isinstance(o, ox.Literal) and is_en(o) and isinstance(s, ox.NamedNode):
                en_labels[s.value].append(o.value)
            if pv == RDF_TYPE and isinstance(o, ox.NamedNode):
                classes.add(o.value)
                if isinstance(s, ox.NamedNode):
                    types[s.value].add(o.value)
            if pv == SUBCLASS:
                for t in (s, o):
                    if isinstance(t, ox.NamedNode):
                        classes.add(t.value)
            key = self.pred_key(pv)
            if key is not None and not pv.startswith(EXT_P):
                kinds[key][kind(o)] += 1

        def term(t, position):
            if isinstance(t, ox.NamedNode):
                return N(self.node(t.value) if position == "node" else self.pred(t.value))
            return str(t)

        for s, p, o in self.triples:
            pv = p.value
            if pv == RDFS_LABEL:
                if isinstance(s, ox.NamedNode) and s.value in SPECIAL_NAMES and isinstance(o, ox.Literal) and is_en(o):
                    continue  # "instance of" / "subclass of" are named below
                if isinstance(o, ox.Literal) and o.language is None and o.datatype.value == XSD_STRING:
                    o = ox.Literal(o.value, language="en")
                T(term(s, "node"), N(RDFS_LABEL), str(o))
                continue
            T(term(s, "node"), term(p, "pred"), term(o, "node"))

        for iri in self.stmt_iri.values():
            T(N(iri), N(RDF_TYPE), N(WIKIBASE + "Statement"))

        # property entities
        names = {}
        for key, n in sorted(self.prop_num.items(), key=lambda kv: kv[1]):
            e = N(ns["wd"] + f"P{n}")
            if key in SPECIAL_NAMES:
                name = SPECIAL_NAMES[key]
                T(e, N(RDFS_LABEL), str(ox.Literal(name, language="en")))
            elif en_labels.get(key):
                name = sorted(en_labels[key])[0]
            else:
                name = words(last_segment(key))
                T(e, N(RDFS_LABEL), str(ox.Literal(name, language="en")))
            names[n] = name
            T(e, N(RDF_TYPE), N(WIKIBASE + "Property"))
            T(e, N(WIKIBASE + "directClaim"), N(ns["wdt"] + f"P{n}"))
            T(e, N(WIKIBASE + "claim"), N(ns["p"] + f"P{n}"))
            T(e, N(WIKIBASE + "statementProperty"), N(ns["ps"] + f"P{n}"))
            T(e, N(WIKIBASE + "qualifier"), N(ns["pq"] + f"P{n}"))
            ptype = "String"
            if kinds.get(key):
                order = ["WikibaseItem", "Time", "Quantity", "String"]
                ptype = max(kinds[key].items(), key=lambda kv: (kv[1], -order.index(kv[0])))[0]
            if key in SPECIAL_NAMES:
                ptype = "WikibaseItem"
            T(e, N(WIKIBASE + "propertyType"), N(WIKIBASE + ptype))

        # labels for unlabelled items, descriptions
        label_of = {}
        for iri, n in self.item_num.items():
            if en_labels.get(iri):
                label_of[iri] = sorted(en_labels[iri])[0]
            else:
                label_of[iri] = item_label(iri, iri in classes)
                T(N(ns["wd"] + f"Q{n}"), N(RDFS_LABEL), str(ox.Literal(label_of[iri], language="en")))
        if descriptions:
            for iri, cls in types.items():
                if iri in self.item_num:
                    first = sorted(cls)[0]
                    desc = label_of.get(first) or item_label(first, True)
                    T(N(ns["wd"] + f"Q{self.item_num[iri]}"), N(SCHEMA_DESCRIPTION),
                      str(ox.Literal(desc, language="en")))
        self.names = names
        return sorted(out)


# ---------------------------------------------------------------------------------------------
# SPARQL rewriting

IRI_RE = r'<[^<>"{}|^`\\\x00-\x20]*>'
PNAME_RE = r"(?:[A-Za-z\u00C0-\uFFFF][\w\-.]*)?:(?:(?:[\w:%\-\u00B7]|\\[^\s]|\.(?=[\w:%\-\\]))*)"
STRING_RE = (r'(?:"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'(?:[^\'\\]|\\.|\'(?!\'\'))*\'\'\''
             r'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\')')
TOKEN_RE = re.compile(
    rf"(?P<ws>\s+)|(?P<comment>#[^\n]*)"
    rf"|(?P<literal>{STRING_RE}(?P<suffix>@[A-Za-z]+(?:-[A-Za-z0-9]+)*|\^\^(?:{IRI_RE}|{PNAME_RE}))?)"
    rf"|(?P<iri>{IRI_RE})|(?P<var>[?$][\w\u00B7]+)|(?P<pname>{PNAME_RE})|(?P<name>[A-Za-z_]\w*)"
    rf"|(?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)"
    rf"|(?P<op>\^\^|&&|\|\||!=|<=|>=|[{{}}()\[\];,./|^*+?!=<>&-])|(?P<other>.)",
    re.S)

# Prefixes that Virtuoso (DBpedia's endpoint) predefines; gold queries written for it use them
# without declaring them. An undeclared prefix found here is expanded (and declared for the
# original query when it is run for the verification).
DEFAULT_PREFIXES = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": XSD,
    "owl": "http://www.w3.org/2002/07/owl#",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "dc": "http://purl.org/dc/elements/1.1/",
    "dct": "http://purl.org/dc/terms/",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "dbo": "http://dbpedia.org/ontology/",
    "dbp": "http://dbpedia.org/property/",
    "dbr": "http://dbpedia.org/resource/",
    "res": "http://dbpedia.org/resource/",
    "dbc": "http://dbpedia.org/resource/Category:",
    "yago": "http://dbpedia.org/class/yago/",
    "geo": "http://www.w3.org/2003/01/geo/wgs84_pos#",
}

GROUP_KEYWORDS = {"OPTIONAL", "MINUS", "UNION", "GRAPH", "SERVICE", "SILENT", "EXISTS", "NOT"}
EXPR_KEYWORDS = {"FILTER", "BIND"}
TAIL_KEYWORDS = {"GROUP", "ORDER", "HAVING", "LIMIT", "OFFSET", "SELECT", "VALUES"}


def tokenize(q):
    toks = []
    pos = 0
    while pos < len(q):
        m = TOKEN_RE.match(q, pos)
        kind_ = m.lastgroup if m.lastgroup != "suffix" else "literal"
        toks.append([kind_, m.group(0)])
        pos = m.end()
    return toks


def prologue(toks):
    """(declared prefixes, index of the first token after the PREFIX/BASE declarations)."""
    prefixes = {}
    sig = [i for i, t in enumerate(toks) if t[0] not in ("ws", "comment")]
    k = 0
    end = 0
    while k + 2 < len(sig):
        t = toks[sig[k]]
        if t[0] == "name" and t[1].upper() == "PREFIX":
            prefixes[toks[sig[k + 1]][1][:-1]] = toks[sig[k + 2]][1][1:-1]
            k += 3
            end = sig[k - 1] + 1
            continue
        break
    return prefixes, end


def undeclared(toks, prefixes):
    out = []
    for kd, tx in toks:
        if kd == "literal" and "^^" in tx and not tx.rsplit("^^", 1)[1].startswith("<"):
            kd, tx = "pname", tx.rsplit("^^", 1)[1]
        if kd == "pname":
            pfx = tx.partition(":")[0]
            if pfx not in prefixes and pfx in DEFAULT_PREFIXES and pfx not in out:
                out.append(pfx)
    return out


def with_default_prefixes(q):
    """The query with PREFIX declarations added for the Virtuoso prefixes it uses undeclared."""
    toks = tokenize(q)
    prefixes, _ = prologue(toks)
    missing = undeclared(toks, prefixes)
    return "".join(f"PREFIX {p}: <{DEFAULT_PREFIXES[p]}> " for p in missing) + q


def unescape_local(local):
    return re.sub(r"\\(.)", r"\1", local)


def unescape_string(s):
    body = s[3:-3] if s[:3] in ('"""', "'''") else s[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m.group(1), m.group(1)), body)


def positions(toks):
    """The position of each IRI token of a query body: 'pred' (a verb or part of a property
    path), 'node' (subject or object of a triple pattern), 'expr' (in FILTER/BIND/VALUES, the
    projection, ORDER BY ...), 'func' (a function or cast) or 'a' (the keyword); and for each
    literal or variable in object position, the index of its predicate token (to find the objects
    of rdfs:label). A small state machine over the triples block grammar, not a full parser:
    the verification catches what it gets wrong."""
    sig = [i for i, t in enumerate(toks) if t[0] not in ("ws", "comment")]
    role = {}
    label_pred = {}
    state = "S"
    depth = 0
    stack = []
    expr_depth = None   # inside braces: an expression (FILTER(...), BIND(...)) with this paren depth
    tail = False        # SELECT/ORDER BY/... clause inside braces (a subquery)
    paren = 0
    cur_pred = None
    k = 0

    def text(j):
        return toks[sig[j]][1] if j < len(sig) else ""

    while k < len(sig):
        i = sig[k]
        kd, tx = toks[i]
        up = tx.upper() if kd == "name" else None
        if kd == "name" and up == "VALUES":
            # VALUES ?x { a b } / VALUES (?x ?y) { (a b) }: every IRI is a value
            j = k + 1
            while j < len(sig) and text(j) != "{":
                j += 1
            while j < len(sig) and text(j) != "}":
                if toks[sig[j]][0] in ("iri", "pname"):
                    role[sig[j]] = "expr"
                j += 1
            k = j + 1
            continue
        # depth 0: projection, modifiers: expressions
        if depth == 0 or expr_depth is not None or tail:
            if tx == "{" and kd == "op":
                # the WHERE clause, or EXISTS { } inside an expression: a group graph pattern
                depth += 1
                stack.append(("{", expr_depth, paren))
                expr_depth = None
                tail = False
                state = "S"
                k += 1
                continue
            if tx == "}" and kd == "op" and depth > 0:
                depth -= 1
                _, expr_depth, paren = stack.pop()
                tail = False
                state = "S"
                k += 1
                continue
            if kd == "op" and tx == "(":
                paren += 1
            elif kd == "op" and tx == ")":
                paren -= 1
                if expr_depth is not None and paren == expr_depth:
                    expr_depth = None
                    state = "S"
            elif kd in ("iri", "pname"):
                role[i] = "func" if text(k + 1) == "(" else "expr"
            k += 1
            continue
        # inside a group graph pattern
        if kd == "name" and up in EXPR_KEYWORDS:
            expr_depth = paren
            # FILTER regex(...) / FILTER(...) / FILTER NOT EXISTS {...}
            nxt = text(k + 1).upper()
            if nxt in ("NOT", "EXISTS"):
                expr_depth = None
                k += 1
                continue
            if text(k + 1) != "(":
                # FILTER fn(...): the expression ends with the call's closing paren
                j = sig[k + 1] if k + 1 < len(sig) else None
                if j is not None and toks[j][0] in ("iri", "pname"):
                    role[j] = "func"
                k += 2
                continue
            k += 1
            continue
        if kd == "name" and up in GROUP_KEYWORDS:
            k += 1
            continue
        if kd == "name" and up in TAIL_KEYWORDS:
            tail = True
            k += 1
            continue
        if kd == "op" and tx == "{":
            depth += 1
            stack.append(("{", None, paren))
            state = "S"
            k += 1
            continue
        if kd == "op" and tx == "}":
            depth -= 1
            _, expr_depth, paren = stack.pop()
            state = "S"
            k += 1
            continue
        if kd == "op" and tx == "[":
            stack.append(("[", state, paren))
            state = "P"
            k += 1
            continue
        if kd == "op" and tx == "]":
            _, was, paren = stack.pop()
            state = "P" if was == "S" else "A"
            k += 1
            continue
        term = kd in ("iri", "pname", "var", "literal", "number") or (kd == "name" and up in ("TRUE", "FALSE"))
        if state == "S":
            if term:
                if kd in ("iri", "pname"):
                    role[i] = "node"
                state = "P"
            elif tx == "(":
                paren += 1
            elif tx == ")":
                paren -= 1
            k += 1
            continue
        if state in ("P", "Pm"):
            if state == "P" and kd == "name" and tx == "a":
                role[i] = "a"
                cur_pred = "a"
                state = "Pm"
            elif state == "P" and kd in ("iri", "pname"):
                role[i] = "pred"
                cur_pred = i
                state = "Pm"
            elif state == "P" and kd == "var":
                cur_pred = None
                state = "O"
            elif kd == "op" and tx in ("^", "!", "("):
                cur_pred = None
                state = "P"
            elif kd == "op" and tx in ("/", "|"):
                cur_pred = None
                state = "P"
            elif state == "Pm" and kd == "op" and tx in ("*", "+", "?", ")"):
                cur_pred = None if tx != ")" else cur_pred
            elif kd == "op" and tx == ".":
                state = "S"
            else:
                state = "O"
                continue  # reprocess as object
            k += 1
            continue
        if state == "O":
            if term:
                if kd in ("iri", "pname"):
                    role[i] = "node"
                elif cur_pred is not None and cur_pred != "a":
                    label_pred[i] = cur_pred
                state = "A"
            elif tx == "(":
                # a collection: nodes until the closing paren
                j = k + 1
                while j < len(sig) and text(j) != ")":
                    if toks[sig[j]][0] in ("iri", "pname"):
                        role[sig[j]] = "node"
                    j += 1
                k = j
                state = "A"
            k += 1
            continue
        if state == "A":
            if tx == ".":
                state = "S"
            elif tx == ";":
                state = "P"
            elif tx == ",":
                state = "O"
            elif term or (kd == "name" and tx == "a"):
                state = "P"
                continue
            k += 1
            continue
        k += 1
    return role, label_pred


class QueryRewriter:
    def __init__(self, reshaper, plain_labels):
        self.r = reshaper
        self.plain_labels = plain_labels
        self.ns = reshaper.ns

    def short(self, iri, used):
        for pfx in ("wd", "wds", "wdt", "p", "ps", "pq", "wikibase"):
            base = self.ns[pfx]
            if iri.startswith(base):
                local = iri[len(base):]
                if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_\-]*", local) and not (pfx == "wd" and local.startswith("statement")) \
                        and not (pfx == "p" and "/" in local):
                    used.add(pfx)
                    return f"{pfx}:{local}"
        return f"<{iri}>"

    def rewrite(self, q):
        toks = tokenize(q)
        prefixes, prologue_end = prologue(toks)
        for pfx in undeclared(toks, prefixes):
            prefixes[pfx] = DEFAULT_PREFIXES[pfx]
        body = toks[prologue_end:]
        role, label_pred = positions(body)

        def expand(tok):
            kd, tx = tok
            if kd == "iri":
                return tx[1:-1]
            pfx, _, local = tx.partition(":")
            if pfx in prefixes:
                return prefixes[pfx] + unescape_local(local)
            return None  # an undeclared prefix (a Virtuoso built-in): left alone

        label_vars = set()
        for i, pred_i in label_pred.items():
            if pred_i is not None and pred_i != "a" and expand(body[pred_i]) == RDFS_LABEL and body[i][0] == "var":
                label_vars.add(body[i][1])

        used_new, used_old = set(), set()
        out = []
        sigb = [i for i, t in enumerate(body) if t[0] not in ("ws", "comment")]
        pos_in_sig = {i: n for n, i in enumerate(sigb)}

        def keep_prefixed(tok, iri):
            if tok[0] == "iri":
                for pfx in ("rdfs", "xsd", "wikibase", "schema"):
                    if iri.startswith(self.ns[pfx]) and prefixes.get(pfx, self.ns[pfx]) == self.ns[pfx] \
                            and re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", iri[len(self.ns[pfx]):]):
                        used_new.add(pfx)
                        return f"{pfx}:{iri[len(self.ns[pfx]):]}"
                return tok[1]
            pfx = tok[1].partition(":")[0]
            if tok[0] == "pname" and pfx in prefixes and (pfx not in self.ns.ns or self.ns[pfx] == prefixes[pfx]):
                used_old.add(pfx)
                return tok[1]
            if tok[0] == "pname" and pfx not in prefixes:
                return tok[1]
            return f"<{iri}>"

        for i, tok in enumerate(body):
            kd, tx = tok
            r = role.get(i)
            if kd == "name" and r == "a":
                out.append(self.short(self.r.pred(RDF_TYPE, fresh_ok=True), used_new))
                continue
            if kd in ("iri", "pname"):
                iri = expand(tok)
                if iri is None or r in (None, "func") or iri.startswith(XSD) or iri.startswith(WIKIBASE) \
                        or iri == RDFS_LABEL or iri == SCHEMA_DESCRIPTION:
                    out.append(keep_prefixed(tok, iri) if iri is not None else tx)
                    continue
                if r == "pred":
                    new = self.r.pred(iri, fresh_ok=True)
                elif r == "expr" and iri in self.r.prop_num:
                    new = self.r.pred(iri)
                else:
                    new = self.r.node(iri, fresh_ok=True)
                out.append(self.short(new, used_new))
                continue
            if kd == "literal":
                m = re.match(STRING_RE, tx)
                lit, suffix = m.group(0), tx[m.end():]
                if suffix.startswith("^^"):
                    dt = suffix[2:]
                    if dt.startswith("<"):
                        out.append(tx)
                    else:
                        iri = expand(["pname", dt])
                        out.append(lit + "^^" + (keep_prefixed(["pname", dt], iri) if iri else dt))
                    continue
                if not suffix and self.is_label_literal(body, i, label_pred, label_vars, expand, sigb, pos_in_sig) \
                        and unescape_string(lit) in self.plain_labels:
                    out.append(lit + "@en")
                    continue
                out.append(tx)
                continue
            out.append(tx)

        decls = []
        for pfx in self.ns.order:
            if pfx in used_new:
                decls.append(f"PREFIX {pfx}: <{self.ns[pfx]}>")
        for pfx, ns in prefixes.items():
            if pfx in used_old and pfx not in used_new:
                decls.append(f"PREFIX {pfx}: <{ns}>")
        rest = "".join(out).lstrip()
        sep = "\n" if "\n" in q.strip() else " "
        return sep.join(decls + [rest])

    @staticmethod
    def is_label_literal(body, i, label_pred, label_vars, expand, sigb, pos_in_sig):
        pred_i = label_pred.get(i)
        if pred_i is not None and pred_i != "a" and expand(body[pred_i]) == RDFS_LABEL:
            return True
        n = pos_in_sig.get(i)
        if n is None:
            return False
        for a, b in ((n - 2, n - 1), (n + 2, n + 1)):
            if 0 <= a < len(sigb) and 0 <= b < len(sigb):
                va, op = body[sigb[a]], body[sigb[b]]
                if va[0] == "var" and va[1] in label_vars and op[1] in ("=", "!="):
                    return True
        return False


# ---------------------------------------------------------------------------------------------
# verification


def norm_term(t, inv):
    if t is None:
        return None
    if isinstance(t, ox.NamedNode):
        return ("iri", inv.get(t.value, t.value) if inv is not None else t.value)
    if isinstance(t, ox.BlankNode):
        return ("bnode",)
    if t.language is not None:
        if is_en(t):
            return ("lit", t.value, XSD_STRING)
        return ("lit", t.value, "@" + t.language.lower())
    return ("lit", t.value, t.datatype.value)


def answers(store, query, inv):
    res = store.query(query)
    if isinstance(res, (bool, ox.QueryBoolean)):
        return bool(res)
    names = [v.value for v in res.variables]
    return collections.Counter(tuple(norm_term(row[v], inv) for v in names) for row in res)


def load_store(lines_or_triples):
    store = ox.Store()
    store.extend(ox.Quad(s, p, o) for s, p, o in lines_or_triples)
    return store


# ---------------------------------------------------------------------------------------------


def write_gz(path, text):
    tmp = str(path) + ".tmp"
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
        gz.write(text.encode("utf-8"))
    os.replace(tmp, path)


def write_json(path, data):
    Path(path).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kb", required=True)
    ap.add_argument("--questions", required=True)
    ap.add_argument("--numbering", choices=("wikidata", "private"), required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--descriptions", action="store_true")
    ap.add_argument("--statements")
    ap.add_argument("--second-language")
    args = ap.parse_args()

    header, triples = read_nt(args.kb)
    qdata = json.loads(Path(args.questions).read_text(encoding="utf-8"))
    questions = list(qdata["questions"])
    extra = []
    n_base = len(questions)
    if args.statements:
        st = json.loads(Path(args.statements).read_text(encoding="utf-8"))
        extra += parse_lines(st.get("turtle", []), ox.RdfFormat.TURTLE)
        questions += st.get("questions", [])
    second = None
    if args.second_language:
        second = json.loads(Path(args.second_language).read_text(encoding="utf-8"))
        lang = second.get("language", "de")
        lines = [f"<{iri}> <{RDFS_LABEL}> {ox.Literal(label, language=lang)} ."
                 for iri, label in sorted(second["labels"].items())]
        extra += parse_lines(lines)
    all_triples = triples + extra

    r = Reshaper(args.numbering, all_triples)
    graph_lines = r.build(args.descriptions)
    n_items, n_props = len(r.item_num), len(r.prop_num)

    plain_labels = {o.value for s, p, o in all_triples
                    if p.value == RDFS_LABEL and isinstance(o, ox.Literal) and o.language is None}
    rw = QueryRewriter(r, plain_labels)
    out_questions = []
    for q in questions:
        nq = {k: v for k, v in q.items() if k != "answers"}
        nq["query"] = {k: (rw.rewrite(v) if k.startswith("sparql") else v) for k, v in q["query"].items()}
        out_questions.append(nq)

    # verification
    in_store = load_store(all_triples)
    out_text = "\n".join(graph_lines) + "\n"
    out_store = ox.Store()
    out_store.bulk_load(out_text.encode("utf-8"), ox.RdfFormat.N_TRIPLES)
    inv = r.inverse()
    kept, dropped = [], []
    empty = 0
    for q, nq in zip(questions, out_questions):
        src = with_default_prefixes(q["query"].get("sparql_standard") or q["query"]["sparql"])
        dst = nq["query"].get("sparql_standard") or nq["query"]["sparql"]
        try:
            a = answers(in_store, src, None)
        except Exception as e:  # noqa: BLE001
            dropped.append((q["id"], f"original query fails: {e}"))
            continue
        try:
            b = answers(out_store, dst, inv)
        except Exception as e:  # noqa: BLE001
            dropped.append((q["id"], f"rewritten query fails: {e}\n    {dst}"))
            continue
        if a != b:
            if isinstance(a, bool) or isinstance(b, bool):
                why = f"{a} != {b}"
            else:
                why = f"{sum(a.values())} vs {sum(b.values())} rows; only in input: " \
                      f"{list((a - b).elements())[:3]}; only in output: {list((b - a).elements())[:3]}"
            dropped.append((q["id"], why + f"\n    {dst}"))
            continue
        if not a:
            empty += 1
        kept.append(nq)

    outdir = Path(args.out)
    outdir.mkdir(parents=True, exist_ok=True)
    note = (f"# Re-shaped into Wikibase form ({args.numbering} numbering) by datasets/wikibase/reshape.py; "
            f"see the README of the folder above this one.")
    write_gz(outdir / "kb.nt.gz", "\n".join(header + [note]) + "\n" + out_text)
    qout = {k: v for k, v in qdata.items() if k != "questions"}
    qout["questions"] = kept
    write_json(outdir / "questions.json", qout)
    if second and second.get("questions"):
        by_id = {q["id"]: q for q in kept}
        lang = second.get("language", "de")
        tq = []
        for t in second["questions"]:
            base = by_id[t["id"]]
            nq = dict(base)
            nq["question"] = [{"language": lang, "string": t["string"]}]
            tq.append(nq)
        tout = {k: v for k, v in qdata.items() if k != "questions"}
        tout["questions"] = tq
        write_json(outdir / f"questions-{lang}.json", tout)

    total = len(questions)
    print(f"{outdir}: {len(graph_lines)} triples ({len(triples)} input + {len(extra)} added), "
          f"{n_items} items, {n_props} properties; instance of = P{r.prop_num.get(RDF_TYPE, '-')}, "
          f"subclass of = P{r.prop_num.get(SUBCLASS, '-')}")
    print(f"  questions: {len(kept)} of {total} kept ({n_base} from {args.questions}"
          f"{f', {total - n_base} from ' + args.statements if args.statements else ''}), {len(dropped)} dropped"
          f"{f'; {empty} kept with an empty (or false) answer on both sides' if empty else ''}")
    if r.fresh:
        print(f"  {len(set(r.fresh))} IRIs of the questions are not in the graph (fresh numbers): "
              f"{sorted(set(r.fresh))[:8]}{' ...' if len(set(r.fresh)) > 8 else ''}")
    for qid, why in dropped:
        print(f"  DROPPED {qid}: {why}")
    sys.exit(1 if len(dropped) > 0.02 * total else 0)


if __name__ == "__main__":
    main()
