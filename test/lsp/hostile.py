#!/usr/bin/env python3
"""Hostile input to `torchtidy lsp`: deeply nested JSON, a Content-Length too small and one
too large (the framing recovers after each), a didChange without contentChanges, a file
closed and reopened during its first analysis, requests after shutdown. After each, the
server must still answer. Prints what it saw for FileCheck.

  hostile.py TORCHTIDY WORKDIR
"""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from lspclient import Client, diagnostics_for, open_document, uri  # noqa: E402

torchtidy, work = sys.argv[1], pathlib.Path(sys.argv[2])
c = Client([torchtidy, "lsp"])


def body(message):
    return json.dumps({"jsonrpc": "2.0", **message}).encode()


c.send_raw(b"[" * 200000 + b"]" * 200000)
print("deep:", c.wait_for(lambda m: "error" in m, "parse error")["error"]["code"])
init = c.reply_to(c.request("initialize", {"capabilities": {"window": {"workDoneProgress": True}}}))
print("initialized:", "capabilities" in init["result"])

# A Content-Length that is too small: the rest of the body runs into the next header.
short = body({"id": 100, "method": "workspace/frobnicate"})
c.send_raw(short, header=b"Content-Length: %d\r\n\r\n" % (len(short) - 10))
print("short:", c.wait_for(lambda m: "error" in m, "parse error")["error"]["code"])
print("after short:", c.reply_to(c.request("workspace/frobnicate"))["error"]["code"])
# One too large: the body swallows the start of the next message, which is read again.
large = body({"id": 200, "method": "workspace/frobnicate"})
c.send_raw(large, header=b"Content-Length: %d\r\n\r\n" % (len(large) + 40))
print("after large:", c.reply_to(c.request("workspace/frobnicate"))["error"]["code"])
c.send_raw(b"{}", header=b"Content-Length: 99999999999999999999\r\n\r\n")
print("huge:", c.wait_for(lambda m: "error" in m, "invalid request")["error"]["code"])
print("after huge:", c.reply_to(c.request("workspace/frobnicate"))["error"]["code"])

bad = work / "bad.cpp"
c.notify("textDocument/didChange", {"textDocument": {"uri": uri(bad), "version": 2}, "contentChanges": []})
print("empty change:", c.reply_to(c.request("workspace/frobnicate"))["error"]["code"])

# Closed and reopened while its first analysis runs: the analysis killed by the close is
# no failure to show; the reopened document is analyzed.
messages = []
open_document(c, bad, bad.read_text())
c.wait_for(lambda m: m.get("method") == "window/workDoneProgress/create", "the first analysis")
c.notify("textDocument/didClose", {"textDocument": {"uri": uri(bad)}})
open_document(c, bad, bad.read_text())
found = c.wait_for(lambda m: diagnostics_for(bad, 1)(m) and m["params"]["diagnostics"],
                   "diagnostics after reopening", on_other=messages.append)
print("reopened:", len(found["params"]["diagnostics"]), "diagnostic(s)")
print("messages shown:", [m["params"]["message"] for m in messages if m.get("method") == "window/showMessage"])

c.reply_to(c.request("shutdown"))
print("after shutdown:", c.reply_to(c.request("workspace/frobnicate"))["error"]["code"])
c.notify("exit", None)
print("exit status:", c.server.wait(timeout=60))
