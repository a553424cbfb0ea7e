#!/usr/bin/python3
"""A small real webhook receiver for the alertgw tests (Python's standard library only).

    webhook_receiver.py --port N --log FILE [--mode ok|fail|hang] [--fail-key KEY ...]

Serves HTTP/1.1 (keep-alive) on 127.0.0.1:N. Every POST is answered, then recorded as one
JSON line in FILE: {"path", "status", "key" (Idempotency-Key), "type" (Content-Type), "auth"
(Authorization), "body"}.
Modes: ok answers 200; fail answers 500; hang never answers (the connection stays open). A
--fail-key KEY is answered 500 whatever the mode (a poison notification). POST /_mode with a
body of "ok", "fail" or "hang" switches the mode at run time (not recorded). Being down is
the process not running: the test kills it and starts it again on the same port.
"""
import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--log", required=True)
parser.add_argument("--mode", default="ok", choices=["ok", "fail", "hang"])
parser.add_argument("--fail-key", action="append", default=[])
args = parser.parse_args()

state = {"mode": args.mode}
lock = threading.Lock()
log = open(args.log, "a", encoding="utf-8")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):  # quiet
        pass

    def answer(self, status, text=b"ok"):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length).decode("utf-8", "replace")
        if self.path == "/_mode":
            state["mode"] = body.strip()
            self.answer(200)
            return
        key = self.headers.get("Idempotency-Key", "")
        mode = state["mode"]
        if mode == "hang":
            time.sleep(3600)
            return
        status = 500 if mode == "fail" or key in args.fail_key else 200
        self.answer(status)
        with lock:
            log.write(json.dumps({"path": self.path, "status": status, "key": key,
                                  "type": self.headers.get("Content-Type", ""),
                                  "auth": self.headers.get("Authorization", ""),
                                  "body": body}) + "\n")
            log.flush()

    def do_GET(self):
        self.answer(200 if self.path == "/_ready" else 404)


server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
server.daemon_threads = True
server.request_queue_size = 256
server.serve_forever()
