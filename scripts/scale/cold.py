#!/usr/bin/env python3
"""Cold questions of the shape "In which <class> is the <relation> of <X>?" (issue 48: one such
question took 16.9 s cold on a 223 K-triple graph, 15.6 s of it one out-and-back candidate
count): a made-up encyclopaedia of that size (generate.py: countries, their capitals, cities
located in countries, companies with headquarters, people born in cities) loaded into a fresh
store, then each question asked in a fresh `chatty-kg ask` process, so nothing is cached in the
process. Records per question the answer against the gold (the same path in SPARQL), the
explanation's total time, the slowest query the explanation lists (candidate, class and answer
queries), and the process's wall time (model loading included).

    cold.py [--triples N] [--per-shape K] [--out reports/scale/cold]

Environment: CHATTY_KG (the binary; default: scripts/build.sh's), SCALE_WORK (default
/var/tmp/chatty-kg-scale).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

NS = "http://example.org/world/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"

# (question template, SPARQL selecting ?x and its label ?xl and the gold ?g)
SHAPES = [
    ("In which country is the capital of {}?",
     f"SELECT ?x ?xl ?g WHERE {{ ?x <{NS}prop/capital> ?c . ?c <{NS}prop/locatedIn> ?g . ?x <{LABEL}> ?xl }}"),
    ("In which country is the headquarters of {}?",
     f"SELECT ?x ?xl ?g WHERE {{ ?x <{NS}prop/headquarters> ?c . ?c <{NS}prop/locatedIn> ?g . ?x <{LABEL}> ?xl }}"),
    ("In which country was {} born?",
     f"SELECT ?x ?xl ?g WHERE {{ ?x <{NS}prop/bornIn> ?c . ?c a <{NS}class/City> ; <{NS}prop/locatedIn> ?g . "
     f"?x <{LABEL}> ?xl }}"),
]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=223_000)
    parser.add_argument("--per-shape", type=int, default=4)
    parser.add_argument("--out", default="reports/scale/cold")
    args = parser.parse_args()
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    binary = os.environ.get("CHATTY_KG") or run(["scripts/build.sh"]).stdout.strip()
    work = os.environ.get("SCALE_WORK", "/var/tmp/chatty-kg-scale")
    os.makedirs(work, exist_ok=True)
    world = f"{work}/cold-world-{args.triples}.nt"
    if not os.path.exists(world):
        run(["python3", "scripts/scale/generate.py", str(args.triples), world, "--seed", "27"])
    store = f"{work}/cold-store-{args.triples}"
    run(["rm", "-rf", store])
    started = time.monotonic()
    run([binary, "load", "--store", store, world])
    load_s = time.monotonic() - started

    questions = []
    for template, query in SHAPES:
        rows = json.loads(run([binary, "sparql", "--store", store, "--json", query + " LIMIT 2000"]).stdout)
        gold = {}
        for b in rows["results"]["bindings"]:
            gold.setdefault((b["x"]["value"], b["xl"]["value"]), set()).add(b["g"]["value"])
        # A spread of them (every n-th, by IRI), each named by a label no other vertex has.
        picked = sorted(gold)[:: max(len(gold) // args.per_shape, 1)][: args.per_shape]
        for (x, label) in picked:
            questions.append((template.format(label), gold[(x, label)]))

    results = []
    for question, gold in questions:
        started = time.monotonic()
        out = run([binary, "ask", "--store", store, "--json", question]).stdout
        wall = time.monotonic() - started
        e = json.loads(out.splitlines()[-1])
        got = {a["value"] for a in e.get("answers", []) if isinstance(a, dict) and "value" in a}
        queries = [(q["elapsed_ms"], q["sparql"]) for q in e.get("sparql", [])]
        queries += [(q["elapsed_ms"], q["sparql"]) for q in (e.get("path_search") or {}).get("class_queries", [])]
        slowest = max(queries, default=(0.0, ""))
        results.append({
            "question": question,
            "right": got == gold,
            "answers": sorted(got),
            "gold": sorted(gold),
            "total_ms": e["timings"]["total_ms"],
            "wall_s": wall,
            "queries": len(queries),
            "slowest_ms": slowest[0],
            "slowest_sparql": slowest[1],
        })
        print(f"{results[-1]['total_ms']:8.0f} ms  {results[-1]['right']!s:5}  {question}", file=sys.stderr)

    os.makedirs(args.out, exist_ok=True)
    with open(f"{args.out}/results.json", "w") as f:
        json.dump({"triples": args.triples, "load_s": load_s, "results": results}, f, indent=1)
    totals = [r["total_ms"] for r in results]
    slow = max(results, key=lambda r: r["slowest_ms"])
    lines = [
        "# Cold questions of the out-and-back shape (issue 48)",
        "",
        f"`scripts/scale/cold.py --triples {args.triples}`: a made-up graph of {args.triples:,} triples "
        f"(`generate.py`, seed 27) loaded into a fresh store ({load_s:.1f} s), then each question in a fresh",
        "`chatty-kg ask` process (nothing cached in the process; the store's files may be in the page cache).",
        "Right: the answers are exactly the gold's (the same path in SPARQL).",
        "",
        "| question | right | total ms | slowest query ms | queries | process s |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(f"| {r['question']} | {'yes' if r['right'] else 'no'} | {r['total_ms']:.0f} | "
                     f"{r['slowest_ms']:.0f} | {r['queries']} | {r['wall_s']:.1f} |")
    lines += [
        "",
        f"{sum(r['right'] for r in results)} of {len(results)} right; total per question: median "
        f"{statistics.median(totals):.0f} ms, max {max(totals):.0f} ms; the slowest query listed "
        f"({slow['slowest_ms']:.0f} ms, of \"{slow['question']}\"):",
        "",
        "```sparql",
        slow["slowest_sparql"],
        "```",
        "",
    ]
    with open(f"{args.out}/README.md", "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
