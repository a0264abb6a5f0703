#!/usr/bin/env python3
"""Builds datasets/debian-packages/kb.nt.gz from Debian's binary package index (the `Packages`
file of Debian 12 "bookworm" main, amd64), Python 3.11 standard library only.

    apt-get update
    python3 datasets/debian-packages/build.py [--packages FILE] [--out datasets/debian-packages/kb.nt.gz]

Without --packages it reads apt's own copy of the index:
/var/lib/apt/lists/deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages(.lz4), through
`/usr/lib/apt/apt-helper cat-file` (which decompresses it). The committed kb.nt.gz was built from
the index of Debian 12.15 (see README.md); a later point release gives slightly different versions.

Output is deterministic: sorted N-Triples, gzip with no timestamp. The graph holds every package
of the sections in SECTIONS with all its fields below, plus every package those depend on or
recommend (same fields, but not their own dependencies). Maintainer e-mail addresses are left out.
"""

import argparse
import glob
import gzip
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

NS = "http://example.org/debian/"
C = NS + "class/"
P = NS + "prop/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SUBCLASS = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
XSD = "http://www.w3.org/2001/XMLSchema#"

SECTIONS = ["games", "math", "hamradio", "electronics", "editors", "sound", "graphics", "video",
            "education", "shells"]

LISTS = "/var/lib/apt/lists/deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages*"

PROPS = {
    "version": "version",
    "section": "section",
    "priority": "priority",
    "installedSize": "installed size",
    "downloadSize": "download size",
    "maintainer": "maintained by",
    "builtFrom": "built from",
    "architecture": "architecture",
    "homepage": "homepage",
    "summary": "short description",
    "dependsOn": "depends on",
    "recommends": "recommends",
}

CLASSES = [
    ("Package", "package", None),
    ("SourcePackage", "source package", None),
    ("Maintainer", "maintainer", None),
    ("Person", "person", "Maintainer"),
    ("Team", "team", "Maintainer"),
    ("Section", "section", None),
    ("Priority", "priority", None),
    ("Architecture", "architecture", None),
]

TEAM_WORDS = re.compile(
    r"\b(team|teams|maintainers|maintainer|group|project|packagers|packaging|developers|"
    r"task ?force|crew|party|community|collaborative|consortium)\b|^(Debian|Ubuntu)\b", re.I)
# Maintainer names that are projects rather than people although no word above says so.
NAMED_TEAMS = {"LMDB", "Tidy HTML5"}


def iri(x):
    return f"<{x}>"


def lit(s, dt=None):
    s = s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{s}"' + (f"^^<{XSD}{dt}>" if dt else "")


def seg(name):
    return quote(name.replace(" ", "_"), safe="+-._~")


def read_index(path):
    if path:
        return Path(path).read_text(encoding="utf-8")
    files = sorted(glob.glob(LISTS))
    if not files:
        sys.exit(f"no {LISTS}: run apt-get update, or pass --packages")
    return subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", files[0]], check=True,
                          capture_output=True).stdout.decode("utf-8")


def parse(text):
    recs = []
    for para in text.split("\n\n"):
        rec, key = {}, None
        for line in para.split("\n"):
            if not line:
                continue
            if line[0] in " \t":
                continue  # continuation (long description): not used
            key, _, value = line.partition(":")
            rec[key] = value.strip()
        if rec.get("Package"):
            recs.append(rec)
    return recs


def first_alternatives(field):
    """Names of the first alternative of each comma-separated group, without versions/arch."""
    out = []
    for group in field.split(","):
        group = group.strip()
        if group:
            out.append(re.split(r"[\s(:\[]", group.split("|")[0].strip())[0])
    return out


def split_maintainer(m):
    """'Jane Doe (nick) <jane@example.org>' -> ('Jane Doe', 'jane@example.org')."""
    name = m.split("<")[0]
    name = re.sub(r"\([^)]*\)", "", name).strip().strip(',"').strip()
    name = re.sub(r"\s+", " ", name)
    email = (re.search(r"<([^>]*)>", m) or [None, ""])[1]
    return name, email


def build(text):
    recs = parse(text)
    by_name = {}
    for r in recs:
        by_name.setdefault(r["Package"], r)  # one version per package in bookworm main
    selected = sorted(n for n, r in by_name.items() if r.get("Section") in SECTIONS)
    sel_set = set(selected)
    edges = []
    targets = set()
    for n in selected:
        r = by_name[n]
        for field, prop in (("Depends", "dependsOn"), ("Recommends", "recommends")):
            for t in first_alternatives(r.get(field, "")):
                if t in by_name and t != n:
                    edges.append((n, prop, t))
                    targets.add(t)
    everything = sorted(sel_set | targets)

    triples = set()

    def add(s, p, o):
        triples.add(f"{s} {p} {o} .")

    for local, label, sup in CLASSES:
        add(iri(C + local), iri(LABEL), lit(label))
        if sup:
            add(iri(C + local), iri(SUBCLASS), iri(C + sup))
    for local, label in PROPS.items():
        add(iri(P + local), iri(LABEL), lit(label))

    def pkg(n):
        return iri(NS + "package/" + seg(n))

    maint_email = {}
    sections, priorities, archs, sources = set(), set(), set(), set()
    for n in everything:
        r = by_name[n]
        s = pkg(n)
        add(s, iri(RDF_TYPE), iri(C + "Package"))
        add(s, iri(LABEL), lit(n))
        add(s, iri(P + "version"), lit(r["Version"]))
        sections.add(r["Section"].split("/")[-1])
        add(s, iri(P + "section"), iri(NS + "section/" + seg(r["Section"].split("/")[-1])))
        priorities.add(r["Priority"])
        add(s, iri(P + "priority"), iri(NS + "priority/" + seg(r["Priority"])))
        if r.get("Installed-Size"):
            add(s, iri(P + "installedSize"), lit(str(int(r["Installed-Size"])), "integer"))
        add(s, iri(P + "downloadSize"), lit(str(int(r["Size"])), "integer"))
        name, email = split_maintainer(r["Maintainer"])
        maint_email.setdefault(name, set()).add(email)
        add(s, iri(P + "maintainer"), iri(NS + "maintainer/" + seg(name)))
        src = r.get("Source", n).split()[0]
        sources.add(src)
        add(s, iri(P + "builtFrom"), iri(NS + "source/" + seg(src)))
        archs.add(r["Architecture"])
        add(s, iri(P + "architecture"), iri(NS + "architecture/" + seg(r["Architecture"])))
        if r.get("Homepage"):
            add(s, iri(P + "homepage"), lit(r["Homepage"]))
        add(s, iri(P + "summary"), lit(r["Description"]))
    for a, prop, b in edges:
        add(pkg(a), iri(P + prop), pkg(b))

    for name, emails in maint_email.items():
        s = iri(NS + "maintainer/" + seg(name))
        team = bool(TEAM_WORDS.search(name)) or name in NAMED_TEAMS or any(
            "lists." in e or "@tracker.debian.org" in e or "alioth" in e for e in emails)
        add(s, iri(RDF_TYPE), iri(C + ("Team" if team else "Person")))
        add(s, iri(LABEL), lit(name))
    for x in sections:
        add(iri(NS + "section/" + seg(x)), iri(RDF_TYPE), iri(C + "Section"))
        add(iri(NS + "section/" + seg(x)), iri(LABEL), lit(x))
    for x in priorities:
        add(iri(NS + "priority/" + seg(x)), iri(RDF_TYPE), iri(C + "Priority"))
        add(iri(NS + "priority/" + seg(x)), iri(LABEL), lit(x))
    for x in archs:
        add(iri(NS + "architecture/" + seg(x)), iri(RDF_TYPE), iri(C + "Architecture"))
        add(iri(NS + "architecture/" + seg(x)), iri(LABEL), lit(x))
    for x in sources:
        add(iri(NS + "source/" + seg(x)), iri(RDF_TYPE), iri(C + "SourcePackage"))
        add(iri(NS + "source/" + seg(x)), iri(LABEL), lit(x))
    return sorted(triples), len(selected), len(everything), len(maint_email)


HEADER = """# Derived from the Debian 12 (bookworm) main amd64 package index (Packages file) by
# datasets/debian-packages/build.py: a selection of packages and fields; maintainer e-mails left out.
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--packages", help="an uncompressed Packages file (default: apt's list)")
    ap.add_argument("--out", default=str(Path(__file__).with_name("kb.nt.gz")))
    args = ap.parse_args()
    triples, nsel, nall, nmaint = build(read_index(args.packages))
    data = (HEADER + "\n".join(triples) + "\n").encode("utf-8")
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
        gz.write(data)
    os.replace(tmp, args.out)
    print(f"{args.out}: {len(triples)} triples, {nsel} packages of the chosen sections, "
          f"{nall} packages in all, {nmaint} maintainers", file=sys.stderr)


if __name__ == "__main__":
    main()
