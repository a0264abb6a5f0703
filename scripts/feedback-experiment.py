#!/usr/bin/env python3
"""Does feedback make later answers better? (reports/feedback-examples.md)

1. Reads a QALD-JSON benchmark, drops repeated questions (same gold query, whitespace aside),
   shuffles the rest with a seed and splits it in two halves (written as first.json and
   second.json in WORK).
2. Starts `chatty-kg serve` on the benchmark's KB (loaded into a store in WORK) with one API key,
   asks every question of the first half through the REST API in a session of its own and rates
   the answer as a person with the gold would: up when it equals the gold answers, else down with
   the gold query as the correction (`query.sparql_standard` where present).
3. Exports the examples that feedback made (`GET /api/examples`) to WORK/examples.json.

Then `chatty-kg eval WORK/second.json --kb KB` without and with `--examples WORK/examples.json`
scores the second half before and after (scripts/feedback-experiment.sh runs all of it).
Standard library only.
"""

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request


def gold_values(question):
    answers = question.get("answers") or []
    values = set()
    for answer in answers:
        if "boolean" in answer:
            values.add("true" if answer["boolean"] else "false")
        for binding in (answer.get("results") or {}).get("bindings", []):
            for term in binding.values():
                values.add(term["value"])
    return values


def gold_query(question):
    query = question.get("query") or {}
    return query.get("sparql_standard") or query.get("sparql")


def split(questions, seed):
    seen, kept = set(), []
    for q in questions:
        key = re.sub(r"\s+", " ", gold_query(q) or "").strip()
        if key and key in seen:
            continue
        seen.add(key)
        kept.append(q)
    random.Random(seed).shuffle(kept)
    half = len(kept) // 2
    return kept[:half], kept[half:], len(questions) - len(kept)


def call(base, key, method, path, body=None, timeout=400):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {key}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            text = response.read().decode()
            return response.status, (json.loads(text) if text else None)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode() or "null")


def answered_values(turn):
    explanation = turn["explanation"]
    return {str(a["value"]) for a in explanation.get("answers", [])}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("benchmark")
    parser.add_argument("--kb", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--port", type=int, default=18765)
    args = parser.parse_args()

    os.makedirs(args.work, exist_ok=True)
    with open(args.benchmark) as f:
        benchmark = json.load(f)
    first, second, repeated = split(benchmark["questions"], args.seed)
    for name, part in (("first", first), ("second", second)):
        with open(os.path.join(args.work, f"{name}.json"), "w") as f:
            json.dump({"dataset": benchmark.get("dataset", {}), "questions": part}, f)
    print(f"{len(benchmark['questions'])} questions, {repeated} repeated dropped: "
          f"{len(first)} fed back, {len(second)} asked before and after", flush=True)

    store = os.path.join(args.work, "store")
    if not os.path.exists(store):
        subprocess.run([args.binary, "load", "--store", store, args.kb], check=True)
    key = "feedback-experiment-key"
    config = os.path.join(args.work, "config.toml")
    with open(config, "w") as f:
        f.write(f'default_kg = "slice"\n[kgs.slice]\nstore = "{store}"\n'
                f'[server]\ndata_dir = "{os.path.join(args.work, "sessions")}"\napi_keys = ["{key}"]\n'
                f"max_questions_per_minute_per_key = 0\nmax_sessions_per_hour_per_key = 0\n")
    base = f"http://127.0.0.1:{args.port}"
    server = subprocess.Popen([args.binary, "serve", "--config", config, "--bind", f"127.0.0.1:{args.port}"],
                              stdout=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                if call(base, key, "GET", "/health")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(1)
        counts = {"up": 0, "corrected": 0, "refused": 0, "not_answered": 0}
        for n, question in enumerate(first):
            text = next(q["string"] for q in question["question"] if q.get("language", "en") == "en")
            status, session = call(base, key, "POST", "/api/sessions", {"kg": "slice"})
            assert status in (200, 201), (status, session)
            status, turn = call(base, key, "POST", f"/api/sessions/{session['session']}/ask", {"question": text})
            if status != 200:
                counts["not_answered"] += 1
                continue
            path = f"/api/sessions/{session['session']}/turns/{turn['turn']}/feedback"
            if answered_values(turn) == gold_values(question) and gold_values(question):
                rating = {"rating": "up"}
            else:
                rating = {"rating": "down", "correction": {"sparql": gold_query(question)}}
            status, body = call(base, key, "POST", path, rating)
            if status == 200:
                counts["up" if rating["rating"] == "up" else "corrected"] += 1
            else:
                counts["refused"] += 1
                print(f"  refused ({status}): {text}: {body}", flush=True)
            if n % 20 == 0:
                print(f"  {n + 1}/{len(first)} {counts}", flush=True)
        status, examples = call(base, key, "GET", "/api/examples")
        assert status == 200, (status, examples)
        with open(os.path.join(args.work, "examples.json"), "w") as f:
            json.dump(examples, f, indent=1)
        counts["examples"] = len(examples["examples"])
        with open(os.path.join(args.work, "feedback.json"), "w") as f:
            json.dump(counts, f)
        print(f"feedback: {counts}", flush=True)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)


if __name__ == "__main__":
    sys.exit(main())
