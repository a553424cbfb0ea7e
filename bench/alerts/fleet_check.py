"""fleet_check.py: bench/alerts/fleet's checker and report (issue 40), from the files of a run:

  sender.log     fleet_sender's `start`, `tick` and `end` lines
  hook.log       fleet_sink --http: `hook <dedupKey> <arrival> <due>`, `hook500 …`, `fail|ok <t>`
  smtp.log       fleet_sink --smtp: `mail <dedupKey> <arrival> <recipients>`, `down|up <t>`
  samples.jsonl  every 5 s: CPU seconds per component, RSS, the outbox group's lag and pending,
                 Redis memory, dead letters
  faults.json    [{name, start, end, receiver}]
  reference.txt  the memory-only run: `<dedupKey> <has e-mail 0|1> <notifType> <due>`
  alertgw*.out   the gateways' delivery lines (`dedupKey=… entry=…`)

check() compares the deliveries with the reference — every notification at the webhook, every
one with recipients in the mailbox, none the reference lacks, none decided twice (a dedupKey
at a receiver from two outbox entries; a repeat from one entry is alertgw's at-least-once
re-send after a fault lost its record, reported apart) — and reports per minute ETags/s in, notifications/s out, alertDelay at delivery (arrival −
due) p50/p99/max, the outbox's lag, each component's CPU in cores, and per fault the time until
deliveries were back under 1 s. `python3 fleet_check.py --self-test` checks the checker.
"""
import collections
import json
import os
import shutil
import subprocess
import sys
import time

LATE = 1.0  # seconds: a delivery later than this after it was due is late
FAULT_GRACE = 30.0  # seconds after a fault's end that still count as its window


def quantile(values, q):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[int(q * (len(v) - 1))]


def read_lines(path):
    try:
        with open(path) as f:
            return [line.split() for line in f if line.strip()]
    except OSError:
        return []


class Report:
    def __init__(self):
        self.lines, self.ok = [], True

    def add(self, *lines):
        self.lines.extend(lines)

    def fail(self, why):
        self.ok = False
        self.lines.append("**FAIL**: " + why)

    @property
    def text(self):
        return "\n".join(self.lines) + "\n"


def load(out, reference):
    sender = read_lines(os.path.join(out, "sender.log"))
    run = {"start": None, "end": None, "ticks": [], "totals": {}}
    for f in sender:
        if f[0] == "start":
            run["start"] = float(f[1])
        elif f[0] == "tick":
            run["ticks"].append((float(f[1]), int(f[3]), float(f[11]), float(f[13])))
        elif f[0] == "end":
            run["end"] = float(f[1])
            run["totals"] = {f[i]: int(f[i + 1]) for i in range(2, len(f) - 1, 2)}
    hooks, mails, hook500 = [], [], 0
    for f in read_lines(os.path.join(out, "hook.log")):
        if f[0] == "hook":
            hooks.append((f[1], float(f[2]), None if f[3] == "-" else float(f[3])))
        elif f[0] == "hook500":
            hook500 += 1
    for f in read_lines(os.path.join(out, "smtp.log")):
        if f[0] == "mail":
            mails.append((f[1], float(f[2])))
    ref = None
    if reference:
        ref = {}
        for f in read_lines(reference):
            ref[f[0]] = (f[1] == "1", f[2], float(f[3]))
    samples = []
    try:
        with open(os.path.join(out, "samples.jsonl")) as f:
            samples = [json.loads(line) for line in f if line.strip()]
    except OSError:
        pass
    try:
        with open(os.path.join(out, "faults.json")) as f:
            faults = json.load(f)
    except (OSError, ValueError):
        faults = []
    return run, hooks, mails, hook500, ref, samples, faults


def entries_by_key(out):
    """{dedupKey: {outbox entry ids}} from the gateways' delivery lines (alertgw*.out: one line
    per entry once every target has it, with `dedupKey=` and `entry=`)."""
    found = collections.defaultdict(set)
    for name in sorted(os.listdir(out)):
        if not (name.startswith("alertgw") and name.endswith(".out")):
            continue
        with open(os.path.join(out, name), errors="replace") as f:
            for line in f:
                key = line.find(" dedupKey=")
                entry = line.find(" entry=")
                if key < 0 or entry < 0:
                    continue
                found[line[key + 10:].split(" ", 1)[0]].add(line[entry + 7:].split(" ", 1)[0])
    return found


def compare(ref, hooks, mails, report, entries=None):
    """Lost, doubled and unexpected deliveries at each receiver."""
    hook_count = collections.Counter(k for k, _, _ in hooks)
    mail_count = collections.Counter(k for k, _ in mails)
    twice_hook = sorted(k for k, n in hook_count.items() if n > 1)
    twice_mail = sorted(k for k, n in mail_count.items() if n > 1)
    # A repeat of one outbox entry is alertgw's at-least-once re-send: the delivery was made but
    # its record was lost (a gateway killed before writing it, write_pacing.hpp; an
    # acknowledgement a stalled or failed primary never kept), so it went again, with the same
    # dedupKey (Idempotency-Key, X-Alert-Dedup-Key), which the receiver drops. A dedupKey in two
    # entries (or in none the gateways logged) was decided twice: a failure.
    entries = entries or {}
    for name, keys in (("webhook", twice_hook), ("e-mail", twice_mail)):
        resent = [k for k in keys if len(entries.get(k, ())) == 1]
        if resent:
            report.add("", "%s: %d delivered again from the same outbox entry (alertgw's "
                       "re-send after a record lost to a fault; same dedupKey, which the "
                       "receiver drops): %s" % (name, len(resent), " ".join(resent[:3])))
        keys[:] = [k for k in keys if k not in resent]
    report.add("", "| receiver | expected (reference) | delivered | lost | twice | not in the reference |",
               "|---|---:|---:|---:|---:|---:|")
    rows = []
    if ref is not None:
        want_hook = set(ref)
        want_mail = {k for k, (mail, _, _) in ref.items() if mail}
        rows.append(("webhook", want_hook, hook_count, twice_hook))
        rows.append(("e-mail", want_mail, mail_count, twice_mail))
    else:
        rows.append(("webhook", None, hook_count, twice_hook))
        rows.append(("e-mail", None, mail_count, twice_mail))
    for name, want, got, twice in rows:
        lost = sorted(want - set(got)) if want is not None else []
        extra = sorted(set(got) - want) if want is not None else []
        report.add("| %s | %s | %d | %d | %d | %d |" % (
            name, len(want) if want is not None else "-", sum(got.values()), len(lost),
            len(twice), len(extra)))
        for what, keys in (("lost", lost), ("delivered twice", twice), ("not in the reference", extra)):
            if keys:
                report.fail("%s: %d %s, e.g. %s" % (name, len(keys), what, " ".join(keys[:5])))
    if ref is not None and not ref:
        report.fail("the reference run gave no notification: nothing was checked")


def deliveries(hooks, mails, ref):
    """(arrival, delay, receiver) of every delivery whose due time is known."""
    due_of = {k: due for k, _, due in hooks if due is not None}
    if ref:
        for k, (_, _, due) in ref.items():
            due_of.setdefault(k, due)
    out = [(a, a - due_of[k], "webhook") for k, a, _ in hooks if k in due_of]
    out += [(a, a - due_of[k], "e-mail") for k, a in mails if k in due_of]
    return sorted(out)


def in_fault_window(t, faults):
    return any(f["start"] <= t <= f["end"] + FAULT_GRACE for f in faults)


def minute_table(run, dels, samples, faults, report):
    start = run["start"]
    last = max([t for t, *_ in run["ticks"]] + [a for a, *_ in dels] + [start + 60])
    minutes = int((last - start) // 60) + 1
    etags = collections.Counter()
    lag99 = collections.defaultdict(float)
    for t, n, _, p99 in run["ticks"]:
        m = int((t - 5 - start) // 60)  # a tick line covers the 10 s before it
        etags[m] += n
        lag99[m] = max(lag99[m], p99)
    per = collections.defaultdict(list)
    for a, d, receiver in dels:
        per[int((a - start) // 60)].append((d, receiver))
    lag, pending = collections.defaultdict(float), collections.defaultdict(int)
    cpu, roles = collections.defaultdict(dict), set()
    for s in samples:
        m = int((s["t"] - start) // 60)
        lag[m] = max(lag[m], s.get("behind_s") or 0)
        pending[m] = max(pending[m], s.get("pending") or 0)
        for role, c in s.get("cpu", {}).items():
            cpu[m][role] = cpu[m].get(role, 0) + c
            roles.add(role)
    roles = sorted(roles - {"machine"}) + (["machine"] if "machine" in roles else [])
    report.add("", "| minute | ETags/s in | answered late p99 (s) | notifications/s out (webhook) "
               "| alertDelay p50 (s) | p99 | max | outbox read behind, max (s) | outbox pending, max "
               "| faults |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for m in range(minutes):
        hooks = [d for d, r in per[m] if r == "webhook"]
        every = [d for d, _ in per[m]]
        names = [f["name"] for f in faults if int((f["start"] - start) // 60) == m]
        report.add("| %d | %.0f | %.2f | %.1f | %.3f | %.3f | %.3f | %.1f | %d | %s |" % (
            m, etags[m] / 60, lag99[m], len(hooks) / 60, quantile(every, 0.5),
            quantile(every, 0.99), max(every) if every else float("nan"), lag[m], pending[m],
            ", ".join(names)))
    report.add("", "CPU per component, in cores (CPU seconds / wall seconds) per minute; `machine` "
               "is the whole machine's busy time (these and everything else, the kernel's "
               "work included), `all` the components' sum:", "",
               "| minute | " + " | ".join(roles) + " | all |",
               "|---:|" + "---:|" * (len(roles) + 1))
    for m in range(minutes):
        wall = 60.0
        row = [cpu[m].get(r, 0) / wall for r in roles]
        report.add("| %d | " % m + " | ".join("%.2f" % c for c in row) + " | %.2f |" % (
            sum(row) - (row[-1] if roles and roles[-1] == "machine" else 0)))
    return minutes


def fault_table(run, dels, faults, report):
    if not faults:
        return
    report.add("", "Each fault's deliveries are those that waited while it was on (due before its "
               "end, delivered after its start); it is over when the last of them late (> 1 s) "
               "arrives:", "", "| fault | at (s from start) | lasted (s) | its deliveries | late "
               "| max alertDelay (s) | back under 1 s, from its start (s) |",
               "|---|---:|---:|---:|---:|---:|---:|")
    for f in faults:
        # A delivery is the fault's when the fault was on while it waited (due to arrival).
        mine = [(a, d) for a, d, r in dels if a >= f["start"] and a - d <= f["end"]
                and f.get("receiver") in (None, r)]
        late = [(a, d) for a, d in mine if d > LATE]
        back = max(a for a, _ in late) - f["start"] if late else 0.0
        report.add("| %s | %.1f | %.1f | %d | %d | %.3f | %.1f |" % (
            f["name"], f["start"] - run["start"], f["end"] - f["start"], len(mine), len(late),
            max((d for _, d in mine), default=0.0), back))


def plot(run, dels, faults, path):
    if not shutil.which("gnuplot") or not dels:
        return False
    data = path + ".dat"
    with open(data, "w") as f:
        for a, d, receiver in dels:
            f.write("%.3f %.4f %d\n" % (a - run["start"], max(d, 0.001), receiver == "e-mail"))
    rects = "".join(
        "set object %d rect from %.1f, graph 0 to %.1f, graph 1 fc rgb '#ffcccc' fs solid 0.5 "
        "noborder behind; set label %d '%s' at %.1f, graph 0.97 rotate by 90 right font ',8';"
        % (i + 1, f["start"] - run["start"], max(f["end"], f["start"] + 1) - run["start"], i + 1,
           f["name"].replace("'", ""), f["start"] - run["start"] + 1)
        for i, f in enumerate(faults))
    script = ("set terminal pngcairo size 1000,480; set output '%s';"
              "set title 'alertDelay at delivery, each notification (faults shaded)';"
              "set logscale y; set ylabel 'seconds (log)'; set xlabel 'seconds from the start';"
              "set yrange [0.001:*]; set key below; %s"
              "plot '%s' using 1:($3==0?$2:1/0) with points pt 7 ps 0.3 lc rgb '#1f77b4' title 'webhook',"
              " '' using 1:($3==1?$2:1/0) with points pt 7 ps 0.3 lc rgb '#2ca02c' title 'e-mail',"
              " %g with lines lc rgb 'red' dt 2 title '1 s'" % (path, rects, data, LATE))
    return subprocess.run(["gnuplot", "-e", script]).returncode == 0


def check(out, reference=None, final=None, drained=True, devices=0, plot_path=None):
    report = Report()
    run, hooks, mails, hook500, ref, samples, faults = load(out, reference)
    if run["start"] is None or run["end"] is None:
        report.fail("the sender did not finish (no start or end line in sender.log)")
        return report
    dels = deliveries(hooks, mails, ref)
    report.add("## alert pipeline end to end — %s, %d cameras, %d cores, %s" % (
        time.strftime("%Y-%m-%d", time.gmtime(run["start"])), devices, os.cpu_count(),
        "%d faults" % len(faults) if faults else "no faults"))
    minute_table(run, dels, samples, faults, report)
    steady = [d for a, d, _ in dels if a - run["start"] >= 60 and not in_fault_window(a, faults)]
    report.add("", "alertDelay at delivery after the first minute%s: %d deliveries, p50 %.3f s, "
               "p99 %.3f s, max %.3f s" % (
                   " outside fault windows (a fault's start to 30 s after its end)" if faults else "",
                   len(steady), quantile(steady, 0.5), quantile(steady, 0.99),
                   max(steady, default=float("nan"))))
    t = run["totals"]
    seconds = run["end"] - run["start"]
    report.add("sent: %d ETags in %d batches (%.0f ETags/s over %.0f s), %d batches retried, %d "
               "dropped; webhook 500 answers: %d" % (
                   t.get("etags", 0), t.get("batches", 0), t.get("etags", 0) / max(seconds, 1),
                   seconds, t.get("retries", 0), t.get("dropped", 0), hook500))
    fault_table(run, dels, faults, report)
    for f in faults:
        if f["name"].endswith("(failed)"):
            report.fail("the fault '%s' could not be made: the run did not test it" % f["name"])
    compare(ref, hooks, mails, report, entries_by_key(out))
    if t.get("dropped", 0):
        report.fail("%d batches were dropped by the sender" % t["dropped"])
    if final is not None:
        if final.get("deadletter"):
            report.fail("%d entries were dead-lettered" % final["deadletter"])
        report.add("", "outbox at the end: %s entries, read to %s of %s, pending %s, dead letters "
                   "%s; Redis used memory %s B" % (
                       final.get("outbox_length"), final.get("read_to"), final.get("last_id"),
                       final.get("pending"), final.get("deadletter"), final.get("redis_used")))
    if not drained:
        report.fail("the outbox was not drained after the stream")
    if samples:
        # After the first minute (every camera known), half way, at the end: flat is healthy.
        # Redis's memory is given without the outbox, which grows by design up to its cap
        # (ALERT_OUTBOX_MAXLEN entries).
        steady = [s for s in samples if s["t"] >= run["start"] + 60] or samples
        points = [steady[0], steady[len(steady) // 2], steady[-1]]
        report.add("", "| at (s from start) | " + " | ".join(
            "RSS %s (MB)" % r for r in sorted(points[-1]["rss_kb"])) +
            " | Redis used memory, outbox aside (MB) | outbox (MB) |",
            "|---:|" + "---:|" * (len(points[-1]["rss_kb"]) + 2))
        for p in points:
            box = p.get("outbox_bytes") or 0
            report.add("| %.0f | " % (p["t"] - run["start"]) + " | ".join(
                "%.0f" % (p["rss_kb"].get(r, 0) / 1024) for r in sorted(points[-1]["rss_kb"])) +
                " | %.1f | %.1f |" % (((p.get("redis_used") or 0) - box) / 2**20, box / 2**20))
        # Which keys make Redis's memory (the sampler counts them once a minute).
        counted = [s for s in steady if "keys" in s] or [s for s in samples if "keys" in s]
        if final and "keys" in final:
            counted.append(final)  # drained, at the end
        if counted:
            points = [counted[0], counted[len(counted) // 2], counted[-1]]
            points = [p for i, p in enumerate(points) if p not in points[:i]]
            kinds = sorted({k for p in points for k in p["keys"]},
                           key=lambda k: -points[-1]["keys"].get(k, [0, 0])[1])
            report.add("", "Redis keys by kind (`alerts:<kind>`), keys and estimated MB, at " +
                       " / ".join("%.0f s" % (p["t"] - run["start"]) for p in points) + ":", "",
                       "| kind | keys | MB |", "|---|---:|---:|")
            for k in kinds:
                report.add("| %s | %s | %s |" % (k, " / ".join(
                    str(p["keys"].get(k, [0, 0])[0]) for p in points), " / ".join(
                    "%.1f" % (p["keys"].get(k, [0, 0])[1] / 2**20) for p in points)))
    path = plot_path or os.path.join(out, "delay.png")
    if plot(run, dels, faults, path):
        report.add("", "plot: " + path)
    report.add("", "verdict: " + ("PASS" if report.ok else "FAIL"))
    return report


def self_test():
    """The checker must see a lost, a doubled and an unexpected delivery."""
    import tempfile
    d = tempfile.mkdtemp(prefix="fleet-check-")
    t0 = 1764460800.0
    with open(os.path.join(d, "sender.log"), "w") as f:
        f.write("start %.3f devices 10 minutes 1 batch 10\n" % t0)
        f.write("tick %.3f etags 100 batches 10 retries 0 lag_p50 0.01 lag_p99 0.02 lag_max 0.03\n" % (t0 + 10))
        f.write("end %.3f etags 100 batches 10 retries 0 dropped 0\n" % (t0 + 61))
    with open(os.path.join(d, "reference.txt"), "w") as f:
        f.write("k1 1 Offline %.3f\nk2 0 Motion %.3f\nk3 1 Online %.3f\n" % (t0 + 1, t0 + 2, t0 + 3))
    good_hooks = "hook k1 %.3f %.3f\nhook k2 %.3f %.3f\nhook k3 %.3f %.3f\n" % (
        t0 + 1.1, t0 + 1, t0 + 2.1, t0 + 2, t0 + 3.2, t0 + 3)
    good_mails = "mail k1 %.3f 1\nmail k3 %.3f 1\n" % (t0 + 1.2, t0 + 3.3)
    cases = [
        (good_hooks, good_mails, True),
        (good_hooks.replace("hook k2", "hook k9"), good_mails, False),  # lost and unexpected
        (good_hooks + "hook k1 %.3f %.3f\n" % (t0 + 5, t0 + 1), good_mails, False),  # twice
        (good_hooks, "mail k1 %.3f 1\n" % (t0 + 1.2), False),  # an e-mail lost
    ]
    twice = good_hooks + "hook k1 %.3f %.3f\n" % (t0 + 11, t0 + 1)
    logged = "notifType=Offline dedupKey=k1 entry=%s deliveredTo=hook,email\n"
    for hooks, mails, ok, gw_log in [c + ("",) for c in cases] + [
            (twice, good_mails, True, (logged % "1-0") * 2),  # one entry sent again: a re-send
            (twice, good_mails, False, logged % "1-0" + logged % "2-0")]:  # decided twice
        with open(os.path.join(d, "alertgw0.out"), "w") as f:
            f.write(gw_log)
        with open(os.path.join(d, "hook.log"), "w") as f:
            f.write(hooks)
        with open(os.path.join(d, "smtp.log"), "w") as f:
            f.write(mails)
        r = check(d, reference=os.path.join(d, "reference.txt"), final={"deadletter": 0},
                  plot_path=os.path.join(d, "p.png"))
        if r.ok != ok:
            print(r.text)
            print("fleet_check self-test: expected ok=%s" % ok)
            return 1
    r = check(d, reference=os.path.join(d, "reference.txt"), final={"deadletter": 2},
              plot_path=os.path.join(d, "p.png"))
    if r.ok:
        print("fleet_check self-test: dead letters were not a failure")
        return 1
    # Memory: RSS per sample, Redis's keys by kind from the samples that counted them and the
    # drained end.
    with open(os.path.join(d, "samples.jsonl"), "w") as f:
        for i, keys in enumerate([{"d": [5, 2**20]}, None, {"d": [7, 2**21], "i": [3, 0]}]):
            s = {"t": t0 + 61 + 5 * i, "cpu": {}, "rss_kb": {"proxy": 1024}, "redis_used": 0}
            f.write(json.dumps(dict(s, keys=keys) if keys else s) + "\n")
    r = check(d, reference=os.path.join(d, "reference.txt"),
              final={"deadletter": 0, "t": t0 + 80, "keys": {"d": [9, 3 * 2**20]}},
              plot_path=os.path.join(d, "p.png"))
    if "| d | 5 / 7 / 9 | 1.0 / 2.0 / 3.0 |" not in r.text or "| i | 0 / 3 / 0 |" not in r.text:
        print(r.text)
        print("fleet_check self-test: Redis's keys by kind are not reported as counted")
        return 1
    shutil.rmtree(d)
    print("fleet_check self-test: passed")
    return 0


if __name__ == "__main__":
    sys.exit(self_test() if sys.argv[1:] == ["--self-test"] else 2)
