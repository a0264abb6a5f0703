#!/usr/bin/env python3
"""Ask a seeded sample of MetaQA dev questions with `chatty-kg ask --json` and score the answers.

A stopgap until `chatty-kg eval` (issue 6): it picks N questions from the KB-consistent subset,
strips the `[...]` entity brackets (a dataset artefact), runs them in one process and prints both
F1 definitions of ../shared/DESIGN.md §Metrics plus the efficiency figures. Answers are compared
as lower-cased labels. Usage:

    scripts/metaqa-sample.py --hops 1 --n 100 --seed 1 [--bin PATH] [--out FILE.jsonl] [-- ASK-ARGS]
"""
import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hops", type=int, default=1)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "../../shared/datasets/metaqa"))
    ap.add_argument("--bin", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "debug/chatty-kg"))
    ap.add_argument("--out", help="keep the explanations (JSON lines) here")
    ap.add_argument("ask_args", nargs="*", help="extra arguments for `chatty-kg ask`")
    args = ap.parse_args()

    folder = os.path.join(args.data, f"{args.hops}-hop")
    lines = open(os.path.join(folder, "qa_dev.txt"), encoding="utf-8").read().splitlines()
    ids = [int(x) for x in open(os.path.join(folder, "qa_dev_kb_consistent_ids.txt")).read().split()]
    types_file = os.path.join(folder, "qa_dev_qtype.txt")
    types = open(types_file).read().splitlines() if os.path.exists(types_file) else [""] * len(lines)
    picked = random.Random(args.seed).sample(ids, args.n)
    questions, golds, kinds = [], [], []
    for i in picked:
        question, answers = lines[i].split("\t")
        questions.append(re.sub(r"[\[\]]", "", question))
        golds.append({a.strip().lower() for a in answers.split("|")})
        kinds.append(types[i])

    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(questions) + "\n")
    cmd = [args.bin, "ask", "--json", "--questions", f.name, *args.ask_args]
    print(" ".join(cmd), file=sys.stderr)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()
    os.unlink(f.name)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write("\n".join(out) + "\n")

    ps, rs, f1s, latencies, calls, tokens_in, tokens_out, queries = [], [], [], [], [], [], [], []
    by_kind = {}
    failures = 0
    for line, gold, kind in zip(out, golds, kinds):
        e = json.loads(line)
        if "error" in e:
            failures += 1
            system = set()
        else:
            system = {(a.get("label") or a["value"]).strip().lower() for a in e["answers"]}
            latencies.append(e["timings"]["total_ms"])
            calls.append(e["llm"]["calls"])
            tokens_in.append(e["llm"]["input_tokens"])
            tokens_out.append(e["llm"]["output_tokens"])
            queries.append(len(e["sparql"]))
        hit = len(system & gold)
        p = 1.0 if not system else hit / len(system)
        r = 1.0 if not gold else hit / len(gold)
        f1 = 0.0 if p + r == 0 else 2 * p * r / (p + r)
        ps.append(p)
        rs.append(r)
        f1s.append(f1)
        by_kind.setdefault(kind, []).append(f1)

    n = len(f1s)
    mp, mr = sum(ps) / n, sum(rs) / n
    print(f"MetaQA {args.hops}-hop dev, {n} questions (seed {args.seed}), {failures} pipeline errors")
    print(f"macro P {mp:.3f}  macro R {mr:.3f}  F1(macro P, macro R) {2 * mp * mr / (mp + mr) if mp + mr else 0:.3f}"
          f"  mean per-question F1 {sum(f1s) / n:.3f}")
    if latencies:
        print(f"per question: LLM calls {statistics.mean(calls):.2f}, input tokens {statistics.mean(tokens_in):.0f},"
              f" output tokens {statistics.mean(tokens_out):.0f}, SPARQL queries {statistics.mean(queries):.2f},"
              f" latency p50 {statistics.median(latencies) / 1000:.2f} s,"
              f" p95 {sorted(latencies)[int(0.95 * (len(latencies) - 1))] / 1000:.2f} s")
    for kind, values in sorted(by_kind.items()):
        print(f"  {kind or 'all'}: {len(values)} questions, mean F1 {sum(values) / len(values):.3f}")


if __name__ == "__main__":
    main()
