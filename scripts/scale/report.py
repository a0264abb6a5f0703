#!/usr/bin/env python3
"""Summarises a scale benchmark directory (scripts/scale/run.sh): one row per graph size from its
load.tsv, summary.json and answers.jsonl, written to SIZES.md and scale.svg in the directory.

    report.py DIR
"""

import json
import math
import sys
from pathlib import Path

SLOW_MS = 200


def row(size_dir):
    load = size_dir / "load.tsv"
    summary = size_dir / "summary.json"
    if not (load.exists() and summary.exists()):
        return None
    header, values = load.read_text().splitlines()[:2]
    loaded = dict(zip(header.split("\t"), values.split("\t")))
    s = json.loads(summary.read_text())
    queries = []
    timeouts = 0
    for line in (size_dir / "answers.jsonl").read_text().splitlines():
        answer = json.loads(line)
        for q in (answer.get("explanation") or {}).get("sparql") or []:
            queries.append((q.get("elapsed_ms") or 0.0, answer["question"], q.get("sparql", "")))
            if "timeout" in (q.get("error") or "").lower() or "timed out" in (q.get("error") or "").lower():
                timeouts += 1
        # The path search's class queries (what ordered its paths), each with its time.
        for q in ((answer.get("explanation") or {}).get("path_search") or {}).get("class_queries") or []:
            queries.append((q.get("elapsed_ms") or 0.0, answer["question"], q.get("sparql", "")))
            timeouts += 1 if q.get("timed_out") else 0
    queries.sort(reverse=True)
    return {
        "triples": int(loaded["triples"]),
        "load_s": float(loaded["load_seconds"]),
        "rss_mb": int(loaded["load_peak_rss_kb"]) / 1024,
        "store_mb": int(loaded["store_kb"]) / 1024,
        "questions": s["questions"],
        "f1": s["overall"]["mean_per_question_f1"],
        "p50": s["efficiency"]["latency_ms_p50"],
        "p95": s["efficiency"]["latency_ms_p95"],
        "sparql": s["efficiency"]["sparql_queries"],
        "llm": s["efficiency"]["llm_calls"],
        "timeouts": timeouts,
        "slow": sum(1 for q in queries if q[0] > SLOW_MS),
        "slowest": queries[:3],
    }


def svg(rows, path):
    """p50 and p95 per question against the graph's size (log scale), one point per size."""
    w, h, left, bottom = 560, 300, 60, 40
    xs = [math.log10(r["triples"]) for r in rows]
    top = max(r["p95"] for r in rows) * 1.15
    lo, hi = min(xs) - 0.2, max(xs) + 0.2

    def x(v):
        return left + (v - lo) / (hi - lo) * (w - left - 20)

    def y(v):
        return h - bottom - v / top * (h - bottom - 20)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
           f'<line x1="{left}" y1="{h - bottom}" x2="{w - 10}" y2="{h - bottom}" stroke="black"/>',
           f'<line x1="{left}" y1="20" x2="{left}" y2="{h - bottom}" stroke="black"/>',
           f'<text x="{w / 2}" y="{h - 5}" text-anchor="middle">triples in the store (log scale)</text>',
           f'<text x="12" y="{h / 2}" transform="rotate(-90 12 {h / 2})" text-anchor="middle">ms per question</text>']
    for r, xv in zip(rows, xs):
        out.append(f'<text x="{x(xv):.0f}" y="{h - bottom + 14}" text-anchor="middle">{r["triples"]:,}</text>')
    for tick in range(0, int(top) + 1, max(int(top / 5 / 100) * 100, 100)):
        out.append(f'<text x="{left - 4}" y="{y(tick) + 4:.0f}" text-anchor="end">{tick}</text>')
    for key, colour in (("p50", "#1f77b4"), ("p95", "#d62728")):
        points = " ".join(f"{x(xv):.1f},{y(r[key]):.1f}" for r, xv in zip(rows, xs))
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for r, xv in zip(rows, xs):
            out.append(f'<circle cx="{x(xv):.1f}" cy="{y(r[key]):.1f}" r="3" fill="{colour}"/>')
        last = rows[-1]
        out.append(f'<text x="{x(xs[-1]) - 6:.0f}" y="{y(last[key]) - 6:.0f}" text-anchor="end" fill="{colour}">{key}</text>')
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")


def main():
    out = Path(sys.argv[1])
    rows = [r for r in (row(d) for d in out.iterdir() if d.is_dir()) if r]
    rows.sort(key=lambda r: r["triples"])
    if not rows:
        sys.exit(f"no finished sizes under {out}")
    lines = ["| triples | load s | load peak RSS MB | store MB | questions | mean F1 | p50 ms | p95 ms "
             "| SPARQL / question | LLM calls / question | query timeouts | queries > 200 ms |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['triples']:,} | {r['load_s']:.1f} | {r['rss_mb']:.0f} | {r['store_mb']:.0f} | "
                     f"{r['questions']} | {r['f1']:.3f} | {r['p50']:.0f} | {r['p95']:.0f} | {r['sparql']:.1f} | "
                     f"{r['llm']:.2f} | {r['timeouts']} | {r['slow']} |")
    lines.append("")
    lines.append("Slowest candidate queries per size (ms, question):")
    lines.append("")
    for r in rows:
        for ms, question, _ in r["slowest"]:
            lines.append(f"- {r['triples']:,} triples: {ms:.0f} ms, \"{question}\"")
    (out / "SIZES.md").write_text("\n".join(lines) + "\n")
    svg(rows, out / "scale.svg")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
