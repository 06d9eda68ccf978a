#!/usr/bin/env python3
"""The language server's project index, built in the background: a file whose findings depend
on functions of other translation units (test/project/Inputs/crosstu) is published first
from its own TU, then again once the server has summarized the database's other TUs; a
saved edit of another file that changes its summary re-analyzes the open file (nothing
stale). Prints what it saw for FileCheck.

  index.py TORCHTIDY WORKDIR CACHEDIR
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from lspclient import Client, change_document, diagnostics_for, open_document, uri  # noqa: E402

torchtidy, work, cache = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
c = Client([torchtidy, "lsp", "--checks=-*,torch-*", f"--cache-dir={cache}"])
c.reply_to(c.request("initialize", {"capabilities": {}}))
c.notify("initialized", {})
logs = []


def on_other(m):
    if m.get("method") == "window/logMessage" and "project index" in m["params"]["message"]:
        logs.append(m["params"]["message"].replace(str(work), "WORK"))


def rules(published):
    return sorted("%d:%s" % (d["range"]["start"]["line"] + 1, d["code"]) for d in published["diagnostics"])


train, evalf = work / "train.cpp", work / "eval.cpp"
open_document(c, train, train.read_text())
first = c.wait_for(diagnostics_for(train), "first diagnostics for train.cpp", on_other=on_other)["params"]
print("first:", rules(first))
indexed = c.wait_for(lambda m: diagnostics_for(train)(m) and rules(m["params"]) != rules(first),
                     "diagnostics for train.cpp with the project index", on_other=on_other)["params"]
print("indexed:", rules(indexed))
for line in logs:
    print("log:", line)

# eval.cpp's validate() now restores training mode: saved, its summary changes, and train.cpp,
# unchanged, is analyzed again without the finding about validate().
text = evalf.read_text().replace("  return total / batches.size();",
                                 "  net->train();\n  return total / batches.size();")
evalf.write_text(text)
open_document(c, evalf, text)
c.notify("textDocument/didSave", {"textDocument": {"uri": uri(evalf)}})
after = c.wait_for(lambda m: diagnostics_for(train)(m) and rules(m["params"]) != rules(indexed),
                   "diagnostics for train.cpp after eval.cpp was saved")["params"]
print("after the edit:", rules(after))
c.reply_to(c.request("shutdown"))
c.notify("exit", None)
print("exit status:", c.server.wait(timeout=60))
