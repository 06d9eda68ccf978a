#!/usr/bin/env python3
"""A scripted session with `torchtidy lsp`: malformed and early messages, unknown methods,
$/progress for the first analysis, a finding with its docs link, notes and fix-it, the
unsaved buffer analyzed, a stale version never published, a file outside any compile
database, invalid params and a crashing analysis, after which the server must still
answer. Prints what it saw for FileCheck.

  session.py TORCHTIDY WORKDIR
"""
import json
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from lspclient import Client, change_document, diagnostics_for, open_document, uri  # noqa: E402

torchtidy, work = sys.argv[1], pathlib.Path(sys.argv[2])
# Not under the work directory, whose compile_commands.json would be found.
outside = pathlib.Path(tempfile.mkdtemp(prefix="torchtidy-lsp-"))
c = Client([torchtidy, "lsp"])

c.send_raw(b"{not json")
print("malformed:", c.wait_for(lambda m: "error" in m, "parse error")["error"]["code"])
c.send_raw(b"[1, 2]")
print("not an object:", c.wait_for(lambda m: "error" in m, "invalid request")["error"]["code"])
c.send_raw(b"", header=b"Content-Type: x\r\n\r\n")  # a header without a length
print("no length:", c.wait_for(lambda m: "error" in m, "invalid request")["error"]["code"])
print("before initialize:", c.reply_to(c.request("textDocument/codeAction"))["error"]["code"])

init = c.reply_to(c.request("initialize", {"capabilities": {"window": {"workDoneProgress": True}}}))
print("capabilities:", json.dumps(init["result"]["capabilities"], sort_keys=True))
c.notify("initialized", {})
c.notify("workspace/somethingNew", {})
print("unknown method:", c.reply_to(c.request("workspace/frobnicate"))["error"]["code"])

bad = work / "bad.cpp"
text = bad.read_text()
open_document(c, bad, text)
progress = []


def on_other(m):
    if m.get("method") == "window/workDoneProgress/create":
        c.send({"id": m["id"], "result": None})
    if m.get("method") == "$/progress":
        progress.append(m["params"]["value"]["kind"])


published = c.wait_for(diagnostics_for(bad, 1), "diagnostics for bad.cpp", on_other=on_other)["params"]
c.wait_for(lambda m: m.get("method") == "$/progress" and m["params"]["value"]["kind"] == "end",
           "the end of the progress", on_other=on_other)
progress.append("end")
print("progress:", " ".join(progress))
for d in published["diagnostics"]:
    print("diagnostic:", d["source"], d["code"], d["severity"], d["range"]["start"]["line"] + 1,
          d["range"]["start"]["character"], d["message"])
    print("  docs:", d["codeDescription"]["href"])
    for r in d.get("relatedInformation", []):
        print("  related:", r["location"]["uri"] == uri(bad), r["location"]["range"]["start"]["line"] + 1,
              r["message"])
d = published["diagnostics"][0]
actions = c.reply_to(c.request("textDocument/codeAction", {
    "textDocument": {"uri": uri(bad)}, "range": d["range"], "context": {"diagnostics": [d]}}))["result"]
for action in actions:
    for edit in action["edit"]["changes"][uri(bad)]:
        print("action:", action["kind"], action["diagnostics"][0]["code"], "->", repr(edit["newText"]),
              "at", edit["range"]["start"]["line"] + 1, edit["range"]["start"]["character"])



def apply_edits(text, edits):
    """The text after an LSP WorkspaceEdit's TextEdits (positions in UTF-16 units; ASCII here)."""
    lines = text.splitlines(True)

    def offset(pos):
        return sum(len(line) for line in lines[:pos["line"]]) + pos["character"]
    for e in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        text = text[:offset(e["range"]["start"])] + e["newText"] + text[offset(e["range"]["end"]):]
    return text


# The quick fix applied to the unsaved buffer, which is analyzed instead of the file on disk:
# the finding is gone. Of two quick edits only the newer one's diagnostics are published.
change_document(c, bad, apply_edits(text, actions[0]["edit"]["changes"][uri(bad)]), 2)
edited = c.wait_for(diagnostics_for(bad, 2), "diagnostics after the edit")["params"]
print("after the quick fix (unsaved):", len(edited["diagnostics"]), "diagnostic(s)")
change_document(c, bad, "// a comment line moves the finding down\n" + text, 3)
change_document(c, bad, "// two comment lines\n// move it further\n" + text, 4)
latest = c.wait_for(diagnostics_for(bad), "diagnostics after two edits")["params"]
print("after two quick edits: version", latest["version"], "line",
      latest["diagnostics"][0]["range"]["start"]["line"] + 1)
c.notify("textDocument/didSave", {"textDocument": {"uri": uri(bad)}})
print("after save:", len(c.wait_for(diagnostics_for(bad, 4), "diagnostics after save")["params"]["diagnostics"]),
      "diagnostic(s)")

lonely = outside / "lonely.cpp"
lonely.write_text("int main() {}\n")
open_document(c, lonely, lonely.read_text())
print("outside:", c.wait_for(lambda m: m.get("method") == "window/showMessage", "a message")["params"]["message"])
print("outside diagnostics:", len(c.wait_for(diagnostics_for(lonely), "diagnostics for lonely.cpp")
                                 ["params"]["diagnostics"]))
lonely.unlink()
outside.rmdir()

print("invalid params:", c.reply_to(c.request("textDocument/codeAction", {"textDocument": {}}))["error"]["code"])
# A line that is no uinteger (1e300 parses as a double): InvalidParams, never converted.
huge_line = {"start": {"line": 1e300, "character": 0}, "end": {"line": 0, "character": 0}}
print("line as a double:", c.reply_to(c.request("textDocument/codeAction", {
    "textDocument": {"uri": uri(bad)}, "range": huge_line, "context": {"diagnostics": []}}))["error"]["code"])

crash = work / "crash.cpp"
open_document(c, crash, crash.read_text())
print("crash:", c.wait_for(lambda m: m.get("method") == "window/showMessage", "a message")["params"]["message"])
again = c.reply_to(c.request("textDocument/codeAction", {
    "textDocument": {"uri": uri(bad)}, "range": latest["diagnostics"][0]["range"], "context": {"diagnostics": []}}))
print("still serving:", "result" in again)

c.notify("textDocument/didClose", {"textDocument": {"uri": uri(bad)}})
print("closed:", len(c.wait_for(diagnostics_for(bad), "cleared diagnostics")["params"]["diagnostics"]), "diagnostic(s)")
c.reply_to(c.request("shutdown"))
c.notify("exit", None)
print("exit status:", c.server.wait(timeout=60))
