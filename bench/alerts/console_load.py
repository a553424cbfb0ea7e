#!/usr/bin/python3
"""bench/alerts/console's client: the console's figures under steady load (issue 37).

    console_load.py --config FILE --devices N --proxies P1,P2 --console PORT --token TOKEN
                    [--reps 9] [--batch 1000] [--down 3000]

1. Silence visibility: one sender thread per proxy sends batches of BATCH heartbeats of the
   config's devices (ts = now), each with one motion ETag of a camera C in region R, without a
   pause. Each repetition makes a silence matching C through the console's API and measures,
   per proxy, the time from the API's answer to the answer of the first batch that saw it
   (stats.silenced > 0: the motion was held back), then ends it and waits until no batch sees
   it any more. Reports p50 and max of the slower proxy per repetition.
2. The offline-now page: DOWN devices go offline in one batch (ts 400 s ago: their holds end in
   that batch), then GET /offline is timed REPS times. Reports p50 and max, and its size.
Prints one JSON object.
"""
import argparse
import json
import random
import statistics
import threading
import time
import urllib.request

p = argparse.ArgumentParser()
p.add_argument("--config", required=True)
p.add_argument("--proxies", required=True)
p.add_argument("--console", required=True, type=int)
p.add_argument("--token", required=True)
p.add_argument("--reps", type=int, default=9)
p.add_argument("--batch", type=int, default=1000)
p.add_argument("--down", type=int, default=3000)
p.add_argument("--devices", type=int, required=True)
args = p.parse_args()

config = json.load(open(args.config))
# Every device of the generator's fleet (alertgen: device d is %08x of 0x10000000 + d, in account
# d mod accounts, %08u of its index + 1); the config lists only those with motion regions.
accounts = len(config["accounts"])
devices = [("%08u" % (d % accounts + 1), "%08x" % (0x10000000 + d)) for d in range(args.devices)]
camera = None
for a, acc in config["accounts"].items():
    for d, dev in acc.get("devices", {}).items():
        for r, reg in dev.get("regions", {}).items():
            if reg.get("enabled", True) and reg.get("sensitivity", 0) <= 0.9:
                camera = (a, d, r)
                break
        if camera:
            break
    if camera:
        break
console = "http://127.0.0.1:%d" % args.console


def post(url, body, method="POST", token=None, timeout=60):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method=method,
                                 headers={"Content-Type": "application/json"})
    if token:
        req.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


stop = threading.Event()
seen = {}  # proxy -> list of (answer time, silenced) per batch
lock = threading.Lock()
batches = {}


def sender(port):
    rnd = random.Random(port)
    n = 0
    while not stop.is_set():
        now = time.time()
        etags = [{"account": a, "device": d, "type": "heartbeat", "ts": now, "state": "online"}
                 for a, d in rnd.sample(devices, min(args.batch, len(devices)))]
        n += 1
        etags.append({"id": "m-%d-%d" % (port, n), "account": camera[0], "device": camera[1],
                      "type": "motion", "ts": now, "region": camera[2], "magnitude": 0.95})
        answer = post("http://127.0.0.1:%d/run" % port, {"value": {"etags": etags}})
        with lock:
            seen.setdefault(port, []).append((time.time(), answer["stats"]["silenced"] > 0))
            batches[port] = batches.get(port, 0) + 1


ports = [int(x) for x in args.proxies.split(",")]
threads = [threading.Thread(target=sender, args=(port,), daemon=True) for port in ports]
for t in threads:
    t.start()
time.sleep(3)  # steady


def first_after(port, t0, want):
    while True:
        with lock:
            for at, silenced in seen[port]:
                if at > t0 and silenced == want:
                    return at
        time.sleep(0.002)


visible = []
for rep in range(args.reps):
    made = post(console + "/api/v1/silences",
                {"matchers": {"account": camera[0], "device": camera[1]}, "duration": 600,
                 "createdBy": "bench"}, token=args.token)
    t0 = time.time()
    visible.append(max(first_after(port, t0, True) - t0 for port in ports))
    post(console + "/api/v1/silences/" + made["silence"]["id"], {"by": "bench"}, "DELETE",
         args.token)
    t1 = time.time()
    for port in ports:
        first_after(port, t1, False)
with lock:
    rate = sum(batches.values())
stop.set()
for t in threads:
    t.join()
elapsed_batches = rate

# The offline-now page with DOWN devices announced offline.
now = time.time()
down = random.Random(7).sample(devices, args.down)
for i in range(0, len(down), 1000):
    etags = [{"account": a, "device": d, "type": "status", "ts": now - 400, "state": "offline"}
             for a, d in down[i:i + 1000]]
    post("http://127.0.0.1:%d/run" % ports[0], {"value": {"etags": etags, "now": now}})
state = json.loads(urllib.request.urlopen(console + "/api/v1/state", timeout=60).read())
page_ms, size = [], 0
for _ in range(args.reps):
    t = time.time()
    body = urllib.request.urlopen(console + "/offline", timeout=60).read()
    page_ms.append((time.time() - t) * 1000)
    size = len(body)
api_ms = []
for _ in range(args.reps):
    t = time.time()
    urllib.request.urlopen(console + "/api/v1/state", timeout=60).read()
    api_ms.append((time.time() - t) * 1000)
print(json.dumps({
    "devices": len(devices), "batch": args.batch, "batches_sent": elapsed_batches,
    "visible_ms": [round(v * 1000, 1) for v in visible],
    "visible_p50_ms": round(statistics.median(visible) * 1000, 1),
    "visible_max_ms": round(max(visible) * 1000, 1),
    "offline": state["counts"]["offline"], "page_bytes": size,
    "page_ms": [round(x, 1) for x in page_ms],
    "page_p50_ms": round(statistics.median(page_ms), 1), "page_max_ms": round(max(page_ms), 1),
    "state_api_p50_ms": round(statistics.median(api_ms), 1),
}))
