#!/usr/bin/env python3
"""`torchtidy lsp` where a file it would read is a FIFO nobody writes to: the compile
database found upwards, a .clang-tidy, a header the buffer includes. The server must
answer (diagnostics or a message), go on serving, and exit after shutdown and exit,
never block on the FIFO. Prints what it saw for FileCheck.

  fifo.py TORCHTIDY WORKDIR
"""
import json
import os
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from lspclient import Client, diagnostics_for, open_document  # noqa: E402

torchtidy, work = sys.argv[1], pathlib.Path(sys.argv[2])


def project(name, fifo, database=True):
    d = work / name
    d.mkdir(parents=True)
    if database:
        json.dump([{"directory": str(d), "file": str(d / "a.cpp"),
                    "arguments": ["clang++", "-std=c++17", "-c", str(d / f)]} for f in ("a.cpp", "b.cpp")],
                  open(d / "compile_commands.json", "w"))
    for f in ("a.cpp", "b.cpp"):
        (d / f).write_text("int x;\n")
    os.mkfifo(d / fifo)
    return d


def answered(c, path):
    m = c.wait_for(lambda m: diagnostics_for(path)(m) or m.get("method") == "window/showMessage",
                   f"an answer for {path.name}", seconds=120)
    return m["method"] + (": " + m["params"]["message"] if "message" in m["params"] else "")


def end(c, name):
    c.reply_to(c.request("shutdown"))
    c.notify("exit", None)
    try:
        status = c.server.wait(20)
    except subprocess.TimeoutExpired:
        c.server.kill()
        status = "still running 20 s after exit"
    print(f"{name}: exit status: {status}")


for name, fifo, database in (("database", "compile_commands.json", False),
                             ("config", ".clang-tidy", True)):
    d = project(name, fifo, database)
    c = Client([torchtidy, "lsp"], cwd=d)
    c.reply_to(c.request("initialize", {"capabilities": {}}))
    open_document(c, d / "a.cpp", "int x;\n")
    print(f"{name}: {answered(c, d / 'a.cpp')}")
    end(c, name)

d = project("header", "h.h")
c = Client([torchtidy, "lsp"], cwd=d)
c.reply_to(c.request("initialize", {"capabilities": {}}))
open_document(c, d / "a.cpp", '#include "h.h"\nint f();\n')
print(f"header: {answered(c, d / 'a.cpp')}")
open_document(c, d / "b.cpp", "int y;\n")
print(f"header, next file: {answered(c, d / 'b.cpp')}")
end(c, "header")
