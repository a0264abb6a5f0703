#!/usr/bin/env python3
"""Writes statements.json for the `qualifiers` variant: Wikibase statements with qualifiers about
the uploads of some packages of the debian-packages graph, read from this machine's Debian
changelogs (/usr/share/doc/<pkg>/changelog.Debian.gz), plus the hand-written questions of
qualifier-questions.json. Python 3.11 standard library only:

    python3 datasets/debian-packages-wikibase/changelogs.py     # writes statements.json beside it

For each package of PACKAGES (all in the graph, with their changelog installed here): its uploads
to Debian (not to experimental, not UNRELEASED, not Ubuntu's) from 2019 on, newest first, at least
4 and at most 20. Each upload is a statement on the package's item for the property "version"
(the graph's own: its direct claim stays the package's current version, and the statement whose
version equals it has the preferred rank), with the qualifiers "point in time" (the upload's date),
"uploaded by" (the person in the ` -- Name <mail>  date` trailer: the graph's person with that
label, else a new person item), "start time" (the upload's date) and "end time" (the next kept
upload's date; none for the newest). Dates are the trailer's own (local) day, at day precision as
Wikidata writes them ("2023-01-02T00:00:00Z"^^xsd:dateTime).

The statements are written in reshape.py's input-side vocabulary (urn:reshape:p:/ps:/pq:/s:);
reshape.py --statements turns them into p:/ps:/pq: and wds: nodes.
"""

import email.utils
import gzip
import json
import re
import sys
from pathlib import Path
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
GRAPH = HERE.parent / "debian-packages" / "kb.nt.gz"
NS = "http://example.org/debian/"
P = NS + "prop/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
XSD = "http://www.w3.org/2001/XMLSchema#"
WIKIBASE = "http://wikiba.se/ontology#"
PERSON = NS + "class/Person"

# shells, editors, math first (the graph's own sections), then well-known base packages
PACKAGES = ["bash", "dash", "vim", "ed", "universal-ctags", "bc", "less", "tmux", "file", "bzip2",
            "git", "sqlite3"]
SINCE = "2019-01-01"
MIN_UPLOADS, MAX_UPLOADS = 4, 20
DEBIAN_SUITE = re.compile(r"^(unstable|sid|stable|testing|frozen|"
                          r"(bookworm|bullseye|buster|stretch)(-security|-proposed-updates)?)$")

NEW_PROPS = [("pointInTime", "point in time"), ("uploadedBy", "uploaded by"),
             ("startTime", "start time"), ("endTime", "end time")]


def seg(name):
    return quote(name.replace(" ", "_"), safe="+-._~")


def lit(s, dt=None):
    s = s.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{s}"' + (f"^^<{XSD}{dt}>" if dt else "")


def person_name(raw):
    """As build.py names maintainers: without a parenthesised nickname."""
    name = re.sub(r"\([^)]*\)", "", raw).strip().strip(',"').strip()
    return re.sub(r"\s+", " ", name)


def uploads(pkg):
    text = gzip.open(f"/usr/share/doc/{pkg}/changelog.Debian.gz", "rt", encoding="utf-8",
                     errors="replace").read()
    out, head = [], None
    for line in text.split("\n"):
        m = re.match(r"^(\S+) \(([^)]+)\) ([^;]+);", line)
        if m:
            head = (m[2], m[3].split())
            continue
        m = re.match(r"^ -- (.*?) <[^>]*>  (.*)$", line)
        if m and head:
            version, suites = head
            head = None
            d = email.utils.parsedate_tz(m[2])
            if d and all(DEBIAN_SUITE.match(s) for s in suites):
                out.append({"version": version, "uploader": person_name(m[1]),
                            "date": "%04d-%02d-%02d" % d[:3]})
    return out


def read_graph():
    labels, persons, versions = {}, set(), {}
    for line in gzip.open(GRAPH, "rt", encoding="utf-8"):
        if line.startswith("#"):
            continue
        s, p, o = line.rstrip(" .\n").split(" ", 2)
        s = s[1:-1]
        if p == f"<{LABEL}>":
            labels.setdefault(json.loads(o), []).append(s)
        elif p == f"<{RDF_TYPE}>" and o == f"<{PERSON}>":
            persons.add(s)
        elif p == f"<{P}version>":
            versions[s] = json.loads(o)
    return labels, persons, versions


PREFIXES = f"""@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
@prefix wikibase: <{WIKIBASE}> .
@prefix c: <{NS}class/> .
@prefix pk: <{NS}package/> .
@prefix mt: <{NS}maintainer/> .
@prefix up: <{NS}uploader/> .
@prefix dp: <{P}> .
@prefix p: <urn:reshape:p:{P}> .
@prefix ps: <urn:reshape:ps:{P}> .
@prefix pq: <urn:reshape:pq:{P}> ."""


def local(iri, ns, pfx):
    rest = iri[len(ns):]
    if iri.startswith(ns) and re.fullmatch(r"[A-Za-z0-9_%]([A-Za-z0-9_%.-]*[A-Za-z0-9_%-])?", rest):
        return f"{pfx}:{rest}"
    return f"<{iri}>"


def main():
    labels, persons, versions = read_graph()
    lines = PREFIXES.split("\n")
    lines += [f"dp:{name} rdfs:label {lit(label)} ." for name, label in NEW_PROPS]
    new_people, summary, body = {}, [], []
    n_statements = 0
    for pkg in PACKAGES:
        item = NS + "package/" + seg(pkg)
        if item not in versions:
            sys.exit(f"{pkg} is not in the graph")
        ups = uploads(pkg)
        recent = [u for u in ups if u["date"] >= SINCE]
        keep = ups[:min(MAX_UPLOADS, max(MIN_UPLOADS, len(recent)))]
        subj = local(item, NS + "package/", "pk")
        for i, u in enumerate(keep):
            st = f"<urn:reshape:s:{pkg}/{u['version']}>"
            who = [s for s in labels.get(u["uploader"], []) if s in persons]
            if who:
                up = who[0]
            else:
                up = NS + "uploader/" + seg(u["uploader"])
                new_people[up] = u["uploader"]
            rank = "PreferredRank" if u["version"] == versions[item] else "NormalRank"
            when = lit(u["date"] + "T00:00:00Z") + "^^xsd:dateTime"
            po = [f"ps:version {lit(u['version'])}", f"wikibase:rank wikibase:{rank}",
                  f"pq:pointInTime {when}",
                  f"pq:uploadedBy {local(up, NS + 'maintainer/', 'mt') if up.startswith(NS + 'maintainer/') else local(up, NS + 'uploader/', 'up')}",
                  f"pq:startTime {when}"]
            if i > 0:
                po.append(f"pq:endTime {lit(keep[i - 1]['date'] + 'T00:00:00Z')}^^xsd:dateTime")
            body.append(f"{subj} p:version {st} .")
            body.append(f"{st} " + " ; ".join(po) + " .")
            n_statements += 1
        summary.append(f"{pkg}: {len(keep)} uploads, {keep[-1]['date']} .. {keep[0]['date']}, "
                       f"current {versions[item]}"
                       f"{' (preferred)' if keep[0]['version'] == versions[item] else ''}")
    for iri, name in sorted(new_people.items()):
        lines.append(f"{local(iri, NS + 'uploader/', 'up')} rdf:type c:Person ; rdfs:label {lit(name)} .")
    lines += body
    questions = json.loads((HERE / "qualifier-questions.json").read_text(encoding="utf-8"))["questions"]
    data = {
        "about": "Wikibase statements with qualifiers on the uploads of some packages, from "
                 "/usr/share/doc/<pkg>/changelog.Debian.gz of a Debian 12 machine, written by "
                 "changelogs.py in reshape.py's input-side vocabulary (Turtle, one line a "
                 "statement), and the questions of qualifier-questions.json.",
        "turtle": lines,
        "questions": questions,
    }
    (HERE / "statements.json").write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n",
                                          encoding="utf-8")
    print(f"statements.json: {n_statements} statements on {len(PACKAGES)} packages, "
          f"{len(new_people)} new person items, {len(questions)} questions", file=sys.stderr)
    for s in summary:
        print("  " + s, file=sys.stderr)


if __name__ == "__main__":
    main()
