#!/usr/bin/python3
"""Reads every .eml in DIR with Python's email package (as a mail client's parser would) and
prints one JSON line per message: its dedup key, Message-ID, In-Reply-To, References (a list)
and subject, so a test can check how the messages thread.

    mail_threads.py DIR
"""
import email
import email.policy
import json
import pathlib
import sys

for path in sorted(pathlib.Path(sys.argv[1]).glob("*.eml")):
    with open(path, "rb") as f:
        msg = email.message_from_binary_file(f, policy=email.policy.default)
    refs = msg.get("References")
    print(json.dumps({
        "key": str(msg.get("X-Alert-Dedup-Key", "")),
        "messageId": str(msg.get("Message-ID", "")),
        "inReplyTo": str(msg.get("In-Reply-To", "")),
        "references": str(refs).split() if refs else [],
        "subject": str(msg.get("Subject", "")),
        "defects": len(msg.defects),
    }))
