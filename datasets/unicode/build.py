#!/usr/bin/env python3
"""Builds datasets/unicode/kb.nt.gz from the Unicode Character Database that Debian's
`unicode-data` package installs under /usr/share/unicode (Python 3.11 standard library only).

    apt-get install unicode-data        # 15.0.0-1 on Debian 12 (bookworm)
    python3 datasets/unicode/build.py [--ucd /usr/share/unicode] [--out datasets/unicode/kb.nt.gz]

Output is deterministic: sorted N-Triples, gzip with no timestamp. The graph holds the assigned
characters of the blocks in BLOCKS below (not all 149k characters: no CJK ideographs, Hangul
syllables, Yi, Tangut, cuneiform, hieroglyphs, ...), their blocks, scripts, general categories
and the Unicode versions that introduced them.
"""

import argparse
import gzip
import os
import re
import sys
from fractions import Fraction
from pathlib import Path

NS = "http://example.org/unicode/"
C = NS + "class/"
P = NS + "prop/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SUBCLASS = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
XSD = "http://www.w3.org/2001/XMLSchema#"

# The blocks whose characters are in the graph (by their Blocks.txt names).
BLOCKS = [
    "Basic Latin", "Latin-1 Supplement", "Latin Extended-A", "Latin Extended-B", "IPA Extensions",
    "Spacing Modifier Letters", "Combining Diacritical Marks", "Greek and Coptic", "Cyrillic",
    "Cyrillic Supplement", "Armenian", "Hebrew", "Arabic", "Syriac", "Thaana", "NKo", "Samaritan",
    "Devanagari", "Bengali", "Gurmukhi", "Gujarati", "Oriya", "Tamil", "Telugu", "Kannada",
    "Malayalam", "Sinhala", "Thai", "Lao", "Tibetan", "Myanmar", "Georgian", "Cherokee", "Ogham",
    "Runic", "Tagalog", "Khmer", "Mongolian", "Ol Chiki", "Phonetic Extensions",
    "Latin Extended Additional", "Greek Extended", "General Punctuation",
    "Superscripts and Subscripts", "Currency Symbols", "Letterlike Symbols", "Number Forms",
    "Arrows", "Mathematical Operators", "Miscellaneous Technical", "Control Pictures",
    "Enclosed Alphanumerics", "Box Drawing", "Block Elements", "Geometric Shapes",
    "Miscellaneous Symbols", "Dingbats", "Glagolitic", "Coptic", "Tifinagh",
    "Supplemental Punctuation", "Hiragana", "Katakana", "Bopomofo", "Yijing Hexagram Symbols",
    "Vai", "Linear B Syllabary", "Old Italic", "Gothic", "Deseret", "Shavian", "Phoenician",
    "Mayan Numerals", "Counting Rod Numerals", "Mahjong Tiles", "Domino Tiles", "Playing Cards",
    "Emoticons", "Transport and Map Symbols", "Chess Symbols",
]

# Major general category -> class of the character (a subclass of "character").
MAJOR = {
    "L": ("Letter", "letter"),
    "M": ("Mark", "mark"),
    "N": ("Number", "number"),
    "P": ("Punctuation", "punctuation mark"),
    "S": ("Symbol", "symbol"),
    "Z": ("Separator", "separator"),
    "C": ("OtherCharacter", "control or format character"),
}

PROPS = {
    "codePoint": "code point",
    "glyph": "glyph",
    "inBlock": "in block",
    "script": "script",
    "generalCategory": "general category",
    "introducedIn": "introduced in",
    "uppercase": "uppercase form",
    "lowercase": "lowercase form",
    "decomposesInto": "decomposes into",
    "numericValue": "numeric value",
    "firstCodePoint": "first code point",
    "lastCodePoint": "last code point",
    "size": "number of code points",
    "scriptCode": "ISO 15924 code",
    "abbreviation": "abbreviation",
    "releaseYear": "release year",
}

# Words kept capitalised in character names (besides the first word): script and language names.
STOP = {"Old", "New", "Common", "Inherited", "Unknown", "Square", "Small", "Script", "Hieroglyphs",
        "Syllabics", "Canadian", "Aboriginal", "Cursive", "Linear", "Inscriptional", "Imperial",
        "Caucasian", "Warang", "Citi", "Masaram", "Gunjala", "Hanifi", "Dives", "Pau", "Cin",
        "Hau", "Sora", "Sompeng", "Mende", "Kikakui", "Psalter", "Zanabazar", "Tai", "Tham",
        "Viet", "Le", "Li", "Nagri", "Mayek", "Meetei", "Gondi", "Nko", "Chiki", "Ol", "Sign",
        "Signwriting", "Egyptian"}
EXTRA_CAPS = {"Greek", "Latin", "Cyrillic", "Arabic", "Hebrew", "Coptic", "Runic", "Ogham", "Roman",
              "Braille", "Chinese", "Japanese", "Korean", "Persian", "Urdu", "Sindhi", "Kashmiri",
              "Pashto", "Tamil", "Vedic", "Sanskrit", "Tibetan", "Mongolian", "Manchu", "Todo",
              "Sibe", "Ali", "Gali", "Mayan", "Deseret", "Shavian", "Gothic", "Phoenician",
              "Samaritan", "Syriac", "Thaana", "Armenian", "Georgian", "Cherokee", "Tifinagh",
              "Glagolitic", "Vai", "Hiragana", "Katakana", "Bopomofo", "Khmer", "Lao", "Thai",
              "Myanmar", "Sinhala", "Malayalam", "Kannada", "Telugu", "Oriya", "Gujarati",
              "Gurmukhi", "Bengali", "Devanagari", "Tagalog", "Italic", "Euro", "Yijing",
              "Rupee", "Yen", "Pound", "Dollar", "Mahjong", "Domino"}


def iri(x):
    return f"<{x}>"


def lit(s, dt=None):
    s = s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{s}"' + (f"^^<{XSD}{dt}>" if dt else "")


def slug(name):
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")


def cp_code(cp):
    return f"U+{cp:04X}"


def read_rows(path):
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if line:
            yield [f.strip() for f in line.split(";")]


def ranges(path):
    """(first, last, value) for each line of a `XXXX..YYYY ; value` file."""
    for row in read_rows(path):
        a, _, b = row[0].partition("..")
        yield int(a, 16), int(b or a, 16), row[1]


def humanize(name, caps):
    """'LATIN CAPITAL LETTER A WITH GRAVE' -> 'Latin capital letter A with grave',
    'CYRILLIC CAPITAL LETTER SHORT I' -> 'Cyrillic capital letter short I'."""
    words = name.split(" ")
    # The name of a capital letter: the words after CAPITAL LETTER up to WITH (or the end).
    capital = set()
    for i in range(2, len(words)):
        if words[i - 2] == "CAPITAL" and words[i - 1] in ("LETTER", "LIGATURE"):
            j = i
            while j < len(words) and words[j] != "WITH":
                j += 1
            capital.update(range(i, j))
            if j > i:
                capital.add(("last", j - 1))
    out = []
    for i, w in enumerate(words):
        if i in capital and (("last", i) in capital or len(w) == 1):
            # single letters and Latin two-letter names (AE, IJ, OU) stay upper case: 'El', 'Omega'
            keep = len(w) == 1 or (len(w) == 2 and "LATIN" in words[:i])
            out.append(w if keep else w.capitalize())
        elif i == 0:
            out.append(w[:1] + w[1:].lower())
        elif w.isalpha() and w.capitalize() in caps:
            out.append(w.capitalize())
        else:
            out.append(w.lower())
    return " ".join(out)


def decimal_lexical(frac):
    """xsd:decimal lexical form; non-terminating fractions are rounded to 4 places."""
    q = Fraction(frac)
    den = q.denominator
    while den % 2 == 0:
        den //= 2
    while den % 5 == 0:
        den //= 5
    if den == 1:
        # terminating: exact
        sign = "-" if q < 0 else ""
        q = abs(q)
        whole = q.numerator // q.denominator
        rest = q - whole
        digits = ""
        while rest:
            rest *= 10
            d = rest.numerator // rest.denominator
            digits += str(d)
            rest -= d
        return f"{sign}{whole}" + (f".{digits}" if digits else "")
    return f"{round(float(q), 4):.4f}"


def build(ucd: Path):
    blocks = [(a, b, n) for a, b, n in ranges(ucd / "Blocks.txt")]
    known = {n for _, _, n in blocks}
    missing = [n for n in BLOCKS if n not in known]
    if missing:
        sys.exit(f"blocks not in Blocks.txt: {missing}")
    chosen = [(a, b, n) for a, b, n in blocks if n in BLOCKS]

    def block_of(cp):
        for a, b, n in chosen:
            if a <= cp <= b:
                return n
        return None

    script_alias = {}  # long name -> short code
    gc_alias = {}  # short -> long
    for row in read_rows(ucd / "PropertyValueAliases.txt"):
        if row[0] == "sc":
            script_alias[row[2]] = row[1]
        elif row[0] == "gc":
            gc_alias[row[1]] = row[2]
    caps = {w for long in script_alias for w in long.split("_") if len(w) > 2} - STOP
    caps |= EXTRA_CAPS

    control_alias = {}
    for row in read_rows(ucd / "NameAliases.txt"):
        cp = int(row[0], 16)
        if row[2] == "control" and cp not in control_alias:
            control_alias[cp] = row[1]

    script_of = {}
    for a, b, v in ranges(ucd / "Scripts.txt"):
        for cp in range(a, b + 1):
            script_of[cp] = v
    age_of = {}
    for a, b, v in ranges(ucd / "DerivedAge.txt"):
        for cp in range(a, b + 1):
            age_of[cp] = v
    version_year = {}
    for line in open(ucd / "DerivedAge.txt", encoding="utf-8"):
        m = re.match(r"# (?:Assigned as of|Newly assigned in) Unicode (\d+)\.(\d+)\.\d+ \(\w+, (\d{4})\)", line)
        if m:
            version_year[f"{m[1]}.{m[2]}"] = m[3]

    chars = {}
    for line in open(ucd / "UnicodeData.txt", encoding="utf-8"):
        f = line.rstrip("\n").split(";")
        cp = int(f[0], 16)
        if f[1].startswith("<") and f[1] != "<control>":
            continue  # ranges (CJK, Hangul, ...) and private use
        blk = block_of(cp)
        if blk is None:
            continue
        chars[cp] = f

    triples = set()

    def add(s, p, o):
        triples.add(f"{s} {p} {o} .")

    def cls(local, label, sup=None):
        add(iri(C + local), iri(LABEL), lit(label))
        if sup:
            add(iri(C + local), iri(SUBCLASS), iri(C + sup))

    cls("Character", "character")
    for local, label in MAJOR.values():
        cls(local, label, "Character")
    cls("Block", "block")
    cls("Script", "script")
    cls("GeneralCategory", "general category")
    cls("UnicodeVersion", "Unicode version")
    for local, label in PROPS.items():
        add(iri(P + local), iri(LABEL), lit(label))

    def char_iri(cp):
        return iri(f"{NS}char/U{cp:04X}")

    used_scripts, used_gc, used_ages = set(), set(), set()
    labels = {}
    for cp, f in sorted(chars.items()):
        name = f[1]
        if name == "<control>":
            name = control_alias.get(cp, f"CONTROL {cp:04X}")
        label = humanize(name, caps)
        labels[cp] = label
        s = char_iri(cp)
        gc = f[2]
        add(s, iri(RDF_TYPE), iri(C + MAJOR[gc[0]][0]))
        add(s, iri(LABEL), lit(label))
        add(s, iri(P + "codePoint"), lit(cp_code(cp)))
        if gc[0] not in "MCZ":
            add(s, iri(P + "glyph"), lit(chr(cp)))
        add(s, iri(P + "inBlock"), iri(NS + "block/" + slug(block_of(cp))))
        sc = script_of.get(cp, "Unknown")
        used_scripts.add(sc)
        add(s, iri(P + "script"), iri(NS + "script/" + script_alias[sc]))
        used_gc.add(gc)
        add(s, iri(P + "generalCategory"), iri(NS + "category/" + gc))
        age = age_of[cp]
        used_ages.add(age)
        add(s, iri(P + "introducedIn"), iri(NS + "version/" + age))
        if f[12] and int(f[12], 16) in chars and int(f[12], 16) != cp:
            add(s, iri(P + "uppercase"), char_iri(int(f[12], 16)))
        if f[13] and int(f[13], 16) in chars and int(f[13], 16) != cp:
            add(s, iri(P + "lowercase"), char_iri(int(f[13], 16)))
        if f[5] and not f[5].startswith("<"):
            for part in f[5].split():
                if int(part, 16) in chars:
                    add(s, iri(P + "decomposesInto"), char_iri(int(part, 16)))
        if f[8]:
            add(s, iri(P + "numericValue"), lit(decimal_lexical(f[8]), "decimal"))

    for a, b, n in chosen:
        s = iri(NS + "block/" + slug(n))
        add(s, iri(RDF_TYPE), iri(C + "Block"))
        add(s, iri(LABEL), lit(n))
        add(s, iri(P + "firstCodePoint"), lit(cp_code(a)))
        add(s, iri(P + "lastCodePoint"), lit(cp_code(b)))
        add(s, iri(P + "size"), lit(str(b - a + 1), "integer"))
    for sc in used_scripts:
        s = iri(NS + "script/" + script_alias[sc])
        add(s, iri(RDF_TYPE), iri(C + "Script"))
        add(s, iri(LABEL), lit(sc.replace("_", " ")))
        add(s, iri(P + "scriptCode"), lit(script_alias[sc]))
    for gc in used_gc:
        s = iri(NS + "category/" + gc)
        add(s, iri(RDF_TYPE), iri(C + "GeneralCategory"))
        add(s, iri(LABEL), lit(gc_alias[gc].replace("_", " ").lower()))
        add(s, iri(P + "abbreviation"), lit(gc))
    for age in used_ages:
        s = iri(NS + "version/" + age)
        add(s, iri(RDF_TYPE), iri(C + "UnicodeVersion"))
        add(s, iri(LABEL), lit("Unicode " + age))
        add(s, iri(P + "releaseYear"), lit(version_year[age], "gYear"))
    return sorted(triples), len(chars)


HEADER = """# Derived from the Unicode Character Database 15.0.0 (Debian package unicode-data 15.0.0-1):
# Blocks.txt, UnicodeData.txt, Scripts.txt, DerivedAge.txt, PropertyValueAliases.txt, NameAliases.txt.
# Copyright (c) 1991-2022 Unicode, Inc. Distributed under the Unicode License (see LICENSE-UNICODE.txt
# beside this file). NOTICE: this is a MODIFIED selection and re-encoding of the Unicode Data Files,
# made by datasets/unicode/build.py; names were re-cased, and only some blocks are included.
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ucd", default="/usr/share/unicode")
    ap.add_argument("--out", default=str(Path(__file__).with_name("kb.nt.gz")))
    args = ap.parse_args()
    triples, nchars = build(Path(args.ucd))
    data = (HEADER + "\n".join(triples) + "\n").encode("utf-8")
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
        gz.write(data)
    os.replace(tmp, args.out)
    print(f"{args.out}: {len(triples)} triples, {nchars} characters", file=sys.stderr)


if __name__ == "__main__":
    main()
