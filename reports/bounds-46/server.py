#!/usr/bin/env python3
"""Another key's questions while one key sends the attack queries of tests/fixtures/attacks/ as
corrections, all at once (issue 46): a server over tests/fixtures/movies.ttl with two keys and a
5 s query timeout. Prints the other key's statuses and latencies, quiet and under the attacks, and
each correction's status. Usage: reports/bounds-46/server.py BINARY > reports/bounds-46/server.txt
"""
import os, tempfile
import json, subprocess, sys, threading, time, urllib.request, glob, statistics
binary, attacks_dir = sys.argv[1], os.path.join(os.path.dirname(__file__), "../../tests/fixtures/attacks")
work = tempfile.mkdtemp()
movies = os.path.join(os.path.dirname(__file__), "../../tests/fixtures/movies.ttl")
subprocess.run([binary, "load", "--store", f"{work}/store", movies], check=True, capture_output=True)
with open(f"{work}/config.toml", "w") as f:
    f.write(f'[kgs.default]\nstore = "{work}/store"\n[kgs.default.graph]\nquery_timeout_secs = 5\n'
            f'[server]\nbind = "127.0.0.1:0"\ndata_dir = "{work}/sessions"\napi_keys = ["alice-key", "bob-key"]\n')
server = subprocess.Popen([binary, "serve", "--config", f"{work}/config.toml"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
url = server.stdout.readline().strip().removeprefix("chatty-kg serving on ")
def call(path, key, body=None, method="POST"):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode() if body is not None else None, method=method,
                                 headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")
questions = ["Who directed Big?", "When was Big released?", "Who starred in Top Gun?", "Who directed Forrest Gump?", "When was Top Gun released?"]
def bob_round():
    _, s = call("/api/sessions", "bob-key", {})
    out = []
    for q in questions:
        t = time.time(); status, _ = call(f"/api/sessions/{s['session']}/ask", "bob-key", {"question": q}); out.append((status, time.time() - t))
    return out
bob_round()  # warm
quiet = bob_round()
_, a = call("/api/sessions", "alice-key", {}); sid = a["session"]
call(f"/api/sessions/{sid}/ask", "alice-key", {"question": "Who starred in Big?"})
results = {}
def attack(path):
    t = time.time(); status, body = call(f"/api/sessions/{sid}/turns/0/feedback", "alice-key", {"rating": "down", "correction": {"sparql": open(path).read()}})
    results[path.split("/")[-1]] = (status, round(time.time() - t, 2), (body.get("error") or {}).get("kind"))
threads = [threading.Thread(target=attack, args=(p,)) for p in sorted(glob.glob(attacks_dir + "/*.rq"))]
for th in threads: th.start()
time.sleep(0.5)
loaded = bob_round()
for th in threads: th.join()
print("another key, quiet:  statuses", [s for s, _ in quiet], "median %.2f s, max %.2f s" % (statistics.median(t for _, t in quiet), max(t for _, t in quiet)))
print("another key, attacks: statuses", [s for s, _ in loaded], "median %.2f s, max %.2f s" % (statistics.median(t for _, t in loaded), max(t for _, t in loaded)))
for k, v in sorted(results.items()): print("correction", k, "status", v[0], "seconds", v[1], "kind", v[2])
status, _ = call("/health", "bob-key", None, "GET"); print("health", status)
server.terminate(); server.wait()
