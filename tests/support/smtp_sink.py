#!/usr/bin/python3
"""A real SMTP server for the alertgw tests and demo: Debian's aiosmtpd (python3-aiosmtpd).

    smtp_sink.py --port N --dir DIR [--reject-rcpt ADDR ...]
                 [--tls-cert PEM --tls-key PEM [--require-starttls]]
                 [--auth-user NAME --auth-password SECRET]

Listens on 127.0.0.1:N and writes each message it accepts to DIR as <n>.eml: a first line
"X-Envelope-From: <addr>", one "X-Envelope-To: <addr>" line per recipient, then the message
as received. A --reject-rcpt address is refused (550) at RCPT TO. With --tls-cert and
--tls-key it offers STARTTLS (--require-starttls: nothing else before it); with --auth-user
it requires that login (offered after STARTTLS only). Each message then also records
"X-Envelope-TLS: yes|no" and "X-Envelope-Login: <name>".
"""
import argparse
import itertools
import os
import ssl
import signal
import threading
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--dir", required=True)
parser.add_argument("--reject-rcpt", action="append", default=[])
parser.add_argument("--tls-cert")
parser.add_argument("--tls-key")
parser.add_argument("--require-starttls", action="store_true")
parser.add_argument("--auth-user")
parser.add_argument("--auth-password")
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
        if args.tls_cert or args.auth_user:
            head += "X-Envelope-TLS: %s\r\n" % ("yes" if session.ssl else "no")
            head += "X-Envelope-Login: %s\r\n" % (session.auth_data or "")
        data = envelope.original_content or envelope.content
        if isinstance(data, str):
            data = data.encode("utf-8")
        tmp = os.path.join(args.dir, ".%d.tmp" % n)
        with open(tmp, "wb") as f:
            f.write(head.encode("utf-8") + data)
        os.rename(tmp, os.path.join(args.dir, "%d.eml" % n))
        return "250 Message accepted for delivery"


def check_login(server, session, envelope, mechanism, auth_data):
    ok = (isinstance(auth_data, LoginPassword) and auth_data.login.decode() == args.auth_user
          and auth_data.password.decode() == args.auth_password)
    return AuthResult(success=ok, auth_data=args.auth_user if ok else None)


server_kwargs = {"decode_data": False}
if args.tls_cert:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.tls_cert, args.tls_key)
    server_kwargs.update(tls_context=context, require_starttls=args.require_starttls)
if args.auth_user:
    server_kwargs.update(authenticator=check_login, auth_required=True)
controller = Controller(Sink(), hostname="127.0.0.1", port=args.port, server_kwargs=server_kwargs)
controller.start()
print("smtp_sink listening on 127.0.0.1:%d, writing to %s" % (args.port, args.dir), flush=True)
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *a: stop.set())
signal.signal(signal.SIGINT, lambda *a: stop.set())
while not stop.is_set():
    time.sleep(0.2)
controller.stop()
