#!/usr/bin/env python3
"""Writes N-Triples of a made-up encyclopaedia: people, organisations, places, works and events
with labels, types, dates, numbers and links between them, for the scale benchmark
(`scripts/scale/run.sh`). It surrounds a question set's own graph with realistic data about
other things: every name is made of syllables and no two entities share one (a counter is mixed
through a bijection before it is spelled), so nothing copies the question's own entities.

    generate.py TRIPLES OUT.nt[.gz] [--seed N]

Deterministic for a given seed. Degrees are skewed as in real graphs: a few places and
organisations have many links, most have few.
"""

import argparse
import gzip
import random
import sys

NS = "http://example.org/world/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SUBCLASS = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
XSD = "http://www.w3.org/2001/XMLSchema#"

ONSETS = ["b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "gr",
          "kr", "st", "th", "sh", "ch", "tr", "pl", "fl", "gl", "sl", "w", "j"]
VOWELS = ["a", "e", "i", "o", "u", "ai", "ei", "ou", "ia", "ea", "y", "oa"]
CODAS = ["", "", "", "n", "r", "l", "s", "m", "th", "nd", "rk", "st"]
SYLLABLES = [o + v + c for o in ONSETS for v in VOWELS for c in CODAS]  # 4,320

# class key -> (label, parent key or None)
CLASSES = {
    "Agent": ("agent", None),
    "Person": ("person", "Agent"),
    "Organisation": ("organisation", "Agent"),
    "Company": ("company", "Organisation"),
    "University": ("university", "Organisation"),
    "Band": ("band", "Organisation"),
    "Place": ("place", None),
    "Country": ("country", "Place"),
    "City": ("city", "Place"),
    "Village": ("village", "Place"),
    "Work": ("creative work", None),
    "Book": ("book", "Work"),
    "Album": ("album", "Work"),
    "Painting": ("painting", "Work"),
    "Event": ("event", None),
    "Festival": ("festival", "Event"),
    "Expedition": ("expedition", "Event"),
}

# predicate key -> label
PREDICATES = {
    "bornIn": "place of birth", "birthDate": "date of birth", "deathDate": "date of death",
    "worksFor": "employer", "studiedAt": "educated at", "memberOf": "member of", "spouse": "spouse",
    "height": "height", "occupation": "occupation",
    "locatedIn": "located in", "population": "population", "area": "area", "capital": "capital",
    "foundedIn": "founded in", "foundingYear": "founding year", "headquarters": "headquarters",
    "employees": "number of employees", "founder": "founded by", "motto": "motto",
    "author": "author", "publisher": "publisher", "published": "publication date", "pages": "number of pages",
    "performer": "performer", "tracks": "number of tracks", "painter": "painted by", "heldAt": "held at",
    "collection": "collection", "startDate": "start date", "participant": "participant", "leader": "led by",
    "isbn": "ISBN",
}
OCCUPATIONS = ["carpenter", "chemist", "cartographer", "glassblower", "archivist", "ferry pilot", "weaver",
               "surveyor", "beekeeper", "luthier", "astronomer", "notary", "mason", "tanner", "botanist"]


class Names:
    """Spells distinct numbers as distinct words: a number in [0, SPACE) goes through an affine
    bijection, then is written in base len(SYLLABLES)."""

    def __init__(self, syllables):
        self.syllables = syllables
        self.space = len(SYLLABLES) ** syllables
        self.multiplier = 2_654_435_761 % self.space | 1  # coprime with the space: a bijection
        while _gcd(self.multiplier, self.space) != 1:
            self.multiplier += 2

    def word(self, n):
        n = (n * self.multiplier + 7_919) % self.space
        parts = []
        for _ in range(self.syllables):
            n, digit = divmod(n, len(SYLLABLES))
            parts.append(SYLLABLES[digit])
        return "".join(parts).capitalize()


def _gcd(a, b):
    while b:
        a, b = b, a % b
    return a


def literal(value, datatype=None, language=None):
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    if language:
        return f'"{escaped}"@{language}'
    if datatype:
        return f'"{escaped}"^^<{XSD}{datatype}>'
    return f'"{escaped}"'


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("triples", type=int)
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=49)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    out = gzip.open(args.out, "wt", compresslevel=3) if args.out.endswith(".gz") else open(args.out, "w")
    written = 0

    def emit(s, p, o):
        nonlocal written
        out.write(f"<{s}> <{p}> {o} .\n")
        written += 1

    for key, (label, parent) in CLASSES.items():
        emit(NS + "class/" + key, LABEL, literal(label, language="en"))
        if parent:
            emit(NS + "class/" + key, SUBCLASS, f"<{NS}class/{parent}>")
    for key, label in PREDICATES.items():
        emit(NS + "prop/" + key, LABEL, literal(label, language="en"))
    prop = {k: NS + "prop/" + k for k in PREDICATES}

    # About 6.7 triples per entity; the shares below are of entities.
    entities = max(int(args.triples / 6.7), 100)
    share = {"Country": 0.0005, "City": 0.02, "Village": 0.05, "Company": 0.03, "University": 0.004,
             "Band": 0.02, "Person": 0.5, "Book": 0.16, "Album": 0.08, "Painting": 0.08, "Festival": 0.03,
             "Expedition": 0.0255}
    counts = {k: max(int(entities * v), 3) for k, v in share.items()}
    words2, words3 = Names(2), Names(3)
    serial = 0  # one counter for every name
    used = set()  # and no word twice: "cha"+"ste" and "chas"+"te" spell the same

    def name(parts=2):
        nonlocal serial
        while True:
            serial += 1
            word = (words2 if parts == 2 else words3).word(serial)
            if word not in used:
                used.add(word)
                return word

    def iri(kind, i):
        return f"{NS}{kind.lower()}/{i}"

    def pick(kind, skew=1.2):
        # A skewed choice: low indexes (the big cities, the big companies) are chosen often.
        n = counts[kind]
        return iri(kind, min(int(rng.paretovariate(skew)) - 1, n - 1) if rng.random() < 0.5 else rng.randrange(n))

    def typed(kind, i, label):
        s = iri(kind, i)
        emit(s, RDF_TYPE, f"<{NS}class/{kind}>")
        emit(s, LABEL, literal(label, language="en"))
        return s

    def date(low, high):
        return literal(f"{rng.randint(low, high)}-{rng.randint(1, 12):02}-{rng.randint(1, 28):02}", "date")

    for i in range(counts["Country"]):
        s = typed("Country", i, "Republic of " + name(3) if i % 3 == 0 else name(3))
        emit(s, prop["population"], literal(str(rng.randint(200_000, 90_000_000)), "integer"))
        emit(s, prop["area"], literal(f"{rng.uniform(800, 2_000_000):.1f}", "decimal"))
    for i in range(counts["City"]):
        s = typed("City", i, name(3))
        emit(s, prop["locatedIn"], f"<{pick('Country', 0.8)}>")
        emit(s, prop["population"], literal(str(int(rng.paretovariate(1.1) * 20_000)), "integer"))
        emit(s, prop["foundingYear"], literal(str(rng.randint(800, 1950)), "gYear"))
        if i < counts["Country"]:
            emit(iri("Country", i), prop["capital"], f"<{s}>")
    for i in range(counts["Village"]):
        s = typed("Village", i, name(2) + (" " + rng.choice(["Ford", "Hollow", "Green", "Cross", "Mill"])
                                          if i % 4 == 0 else ""))
        emit(s, prop["locatedIn"], f"<{pick('City')}>")
        emit(s, prop["population"], literal(str(rng.randint(40, 4_000)), "integer"))
    for kind, suffix in (("Company", ["Works", "Holdings", "& Sons", "Freight", "Instruments", ""]),
                         ("University", ["University", "Institute of Technology", "College"]),
                         ("Band", ["", "", "Quartet", "Brass Band", "Ensemble"])):
        for i in range(counts[kind]):
            label = name(2)
            end = rng.choice(suffix)
            if kind == "University":
                label = f"{end} of {label}" if i % 2 else f"{label} {end}"
            elif end:
                label = f"{label} {end}"
            s = typed(kind, i, label)
            emit(s, prop["foundingYear"], literal(str(rng.randint(1650, 2020)), "gYear"))
            emit(s, prop["headquarters"] if kind != "Band" else prop["foundedIn"], f"<{pick('City')}>")
            if kind == "Company":
                emit(s, prop["employees"], literal(str(int(rng.paretovariate(1.0) * 12)), "integer"))
            if rng.random() < 0.3:
                emit(s, prop["motto"], literal(" ".join(name(2).lower() for _ in range(3)), language="en"))
    for i in range(counts["Person"]):
        s = typed("Person", i, f"{name(2)} {name(3)}")
        emit(s, prop["bornIn"], f"<{pick('City') if rng.random() < 0.7 else pick('Village')}>")
        emit(s, prop["birthDate"], date(1820, 2005))
        if rng.random() < 0.4:
            emit(s, prop["deathDate"], date(1880, 2025))
        emit(s, prop["occupation"], literal(rng.choice(OCCUPATIONS), language="en"))
        emit(s, prop["worksFor"], f"<{pick('Company', 1.0)}>")
        if rng.random() < 0.5:
            emit(s, prop["studiedAt"], f"<{pick('University')}>")
        if rng.random() < 0.15:
            emit(s, prop["memberOf"], f"<{pick('Band')}>")
        if rng.random() < 0.3 and i > 0:
            emit(s, prop["spouse"], f"<{iri('Person', rng.randrange(i))}>")
        if rng.random() < 0.3:
            emit(s, prop["height"], literal(f"{rng.uniform(1.45, 2.05):.2f}", "decimal"))
    for kind in ("Book", "Album", "Painting"):
        for i in range(counts[kind]):
            title = " ".join(name(2) for _ in range(rng.randint(1, 3)))
            s = typed(kind, i, title if rng.random() < 0.6 else f"The {title}")
            creator = {"Book": "author", "Album": "performer", "Painting": "painter"}[kind]
            emit(s, prop[creator], f"<{pick('Person', 1.5) if kind != 'Album' else pick('Band')}>")
            emit(s, prop["published"], date(1700, 2025))
            if kind == "Book":
                emit(s, prop["publisher"], f"<{pick('Company')}>")
                emit(s, prop["pages"], literal(str(rng.randint(40, 1400)), "integer"))
                emit(s, prop["isbn"], literal(f"978-{rng.randint(0, 9)}-{rng.randint(1000, 99999)}-"
                                              f"{rng.randint(100, 999)}-{rng.randint(0, 9)}"))
            elif kind == "Album":
                emit(s, prop["tracks"], literal(str(rng.randint(4, 24)), "integer"))
            else:
                emit(s, prop["collection"], f"<{pick('University')}>")
    for kind in ("Festival", "Expedition"):
        for i in range(counts[kind]):
            s = typed(kind, i, f"{name(2)} {'Festival' if kind == 'Festival' else 'Expedition'} {rng.randint(1850, 2025)}")
            emit(s, prop["startDate"], date(1850, 2025))
            emit(s, prop["heldAt"] if kind == "Festival" else prop["leader"],
                 f"<{pick('City') if kind == 'Festival' else pick('Person')}>")
            participants = {pick("Person") if kind == "Expedition" else pick("Band") for _ in range(rng.randint(1, 4))}
            for participant in sorted(participants):
                emit(s, prop["participant"], f"<{participant}>")
    out.close()
    print(f"{written} triples, {serial} names, {entities} entities -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
