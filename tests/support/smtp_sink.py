#!/usr/bin/python3
"""A real SMTP server for the alertgw tests and demo: Debian's aiosmtpd (python3-aiosmtpd).

    smtp_sink.py --port N --dir DIR [--reject-rcpt ADDR ...]

Listens on 127.0.0.1:N and writes each message it accepts to DIR as <n>.eml: a first line
"X-Envelope-From: <addr>", one "X-Envelope-To: <addr>" line per recipient, then the message
as received. A --reject-rcpt address is refused (550) at RCPT TO.
"""
import argparse
import itertools
import os
import signal
import threading
import time

from aiosmtpd.controller import Controller

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--dir", required=True)
parser.add_argument("--reject-rcpt", action="append", default=[])
args = parser.parse_args()
os.makedirs(args.dir, exist_ok=True)
counter = itertools.count(1)
lock = threading.Lock()


class Sink:
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in args.reject_rcpt:
            return "550 no such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        with lock:
            n = next(counter)
        head = "X-Envelope-From: %s\r\n" % envelope.mail_from
        head += "".join("X-Envelope-To: %s\r\n" % r for r in envelope.rcpt_tos)
        data = envelope.original_content or envelope.content
        if isinstance(data, str):
            data = data.encode("utf-8")
        tmp = os.path.join(args.dir, ".%d.tmp" % n)
        with open(tmp, "wb") as f:
            f.write(head.encode("utf-8") + data)
        os.rename(tmp, os.path.join(args.dir, "%d.eml" % n))
        return "250 Message accepted for delivery"


controller = Controller(Sink(), hostname="127.0.0.1", port=args.port,
                        server_kwargs={"decode_data": False})
controller.start()
print("smtp_sink listening on 127.0.0.1:%d, writing to %s" % (args.port, args.dir), flush=True)
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *a: stop.set())
signal.signal(signal.SIGINT, lambda *a: stop.set())
while not stop.is_set():
    time.sleep(0.2)
controller.stop()
