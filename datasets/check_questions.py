#!/usr/bin/env python3
"""Checks a dev domain's questions.json against its kb.nt.gz (needs pyoxigraph):

    python3 -m venv /var/tmp/dsvenv && /var/tmp/dsvenv/bin/pip install pyoxigraph
    /var/tmp/dsvenv/bin/python datasets/check_questions.py datasets/<name> [-v]

Every gold query must parse and give a non-empty answer (at most 30 rows, a single projected
variable; a single COUNT for `count`), yes/no questions must have both outcomes, and there must
be at least 8 forms (`answertype`) with at least 5 questions each. -v prints each answer.
"""

import collections
import gzip
import json
import sys
from pathlib import Path

import pyoxigraph as ox

MAX_ROWS = 30


def short(term):
    if isinstance(term, ox.Literal):
        return term.value
    return str(term).rsplit("/", 1)[-1].rstrip(">")


def main():
    verbose = "-v" in sys.argv
    folders = [a for a in sys.argv[1:] if a != "-v"]
    if len(folders) != 1:
        sys.exit("usage: check_questions.py DATASET_DIR [-v]")
    HERE = Path(folders[0]).resolve()
    store = ox.Store()
    with gzip.open(HERE / "kb.nt.gz", "rb") as f:
        store.bulk_load(f, ox.RdfFormat.N_TRIPLES)
    print(f"{HERE.name}: {len(store)} triples")
    data = json.loads((HERE / "questions.json").read_text(encoding="utf-8"))
    qs = data["questions"]
    errors = []
    forms = collections.Counter()
    asks = collections.defaultdict(collections.Counter)
    ids = set()
    for q in qs:
        qid, form = q["id"], q["answertype"]
        text = q["question"][0]["string"]
        if qid in ids:
            errors.append(f"{qid}: duplicate id")
        ids.add(qid)
        forms[form] += 1
        try:
            result = store.query(q["query"]["sparql"])
        except Exception as e:  # noqa: BLE001
            errors.append(f"{qid}: {e}")
            continue
        if isinstance(result, (bool, ox.QueryBoolean)):
            result = bool(result)
            asks[form][result] += 1
            answer = [str(result).lower()]
        else:
            vars_ = [v.value for v in result.variables]
            rows = [row[0] for row in result]
            if len(vars_) != 1:
                errors.append(f"{qid}: projects {vars_}, not one variable")
            if not rows or any(r is None for r in rows):
                errors.append(f"{qid}: empty answer")
            if len(rows) > MAX_ROWS:
                errors.append(f"{qid}: {len(rows)} rows")
            if form == "count" and (len(rows) != 1 or "COUNT" not in q["query"]["sparql"].upper()):
                errors.append(f"{qid}: a count question must give one COUNT")
            answer = [short(r) for r in rows if r is not None]
        if verbose:
            print(f"{qid:>3} [{form}] {text}\n      -> {answer}")
    for form, n in sorted(forms.items()):
        print(f"  {form}: {n}" + (f" ({dict(asks[form])})" if form in asks else ""))
        if n < 5:
            errors.append(f"form {form}: only {n} questions")
    for form, outcomes in asks.items():
        if len(outcomes) < 2:
            errors.append(f"form {form}: yes/no answers are all {list(outcomes)}")
    if len(forms) < 8:
        errors.append(f"only {len(forms)} forms")
    print(f"  {len(qs)} questions in {len(forms)} forms")
    for e in errors:
        print("ERROR", e)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
