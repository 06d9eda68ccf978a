#!/usr/bin/env python3
"""Runs torchtidy on names and text that are not valid UTF-8 (lit's RUN lines cannot
spell such bytes).

Usage: nonutf8.py TORCHTIDY DIR FINDINGS_CPP -- COMPILE_FLAGS...
DIR gets caf<E9>.cpp (Latin-1 name; FINDINGS_CPP with a Latin-1 comment on the line of
its finding), clean.cpp, a --files-from list and a compile database naming caf<E9>.cpp.
Each case prints its exit status and what its report holds, read as strict UTF-8 JSON.
"""
import json
import os
import subprocess
import sys

torchtidy, root, findings = sys.argv[1], sys.argv[2], sys.argv[3]
flags = sys.argv[sys.argv.index("--") + 1:]
broot = os.fsencode(root)
latin = os.path.join(broot, b"caf\xe9.cpp")
clean = os.path.join(broot, b"clean.cpp")
with open(findings, "rb") as f:
    text = f.read()
with open(latin, "wb") as f:
    f.write(text.replace(b"loss.backward();", b"loss.backward(); // r\xe9tropropagation"))
with open(clean, "wb") as f:
    f.write(b"int clean() { return 0; }\n")
with open(os.path.join(broot, b"list.txt"), "wb") as f:
    f.write(latin + b"\n" + clean + b"\n")
db = os.path.join(broot, b"db")
os.makedirs(db, exist_ok=True)
entries = b",".join(
    b'{"directory": "%s", "file": "%s", "arguments": ["clang++", %s, "-c", "%s"]}'
    % (broot, f, b", ".join(json.dumps(a).encode() for a in flags), f)
    for f in (latin, clean))
with open(os.path.join(db, b"compile_commands.json"), "wb") as f:
    f.write(b"[" + entries + b"]")


def case(name, fmt, args, with_flags=True):
    out = os.path.join(broot, name.encode() + b"." + fmt.encode())
    cmd = [torchtidy.encode(), b"--format=" + fmt.encode(), b"-o", out,
           b"--source-root", broot] + args
    if with_flags:
        cmd += [b"--"] + [os.fsencode(a) for a in flags]
    rc = subprocess.run(cmd, stderr=subprocess.PIPE).returncode
    print(f"{name}: exit {rc}")
    with open(out, "rb") as f:
        doc = json.loads(f.read().decode("utf-8", errors="strict"))
    if fmt == "json":
        print(f"{name}: analyzed {doc['summary']['filesAnalyzed']}, "
              f"findings {len(doc['findings'])}, uris {[x['uri'] for x in doc['findings']]}")
    else:
        run = doc["runs"][0]
        print(f"{name}: results {len(run['results'])}, automation id "
              f"{run['automationDetails']['id']!a}, uris "
              f"{[r['locations'][0]['physicalLocation']['artifactLocation']['uri'] for r in run['results']]}")
        snippets = [r["locations"][0]["physicalLocation"].get("contextRegion", {})
                    .get("snippet", {}).get("text", "") for r in run["results"]]
        print(f"{name}: snippets {snippets!a}")


case("args", "json", [latin, clean])
case("files-from", "sarif", [b"--files-from", os.path.join(broot, b"list.txt")])
case("compile-db", "sarif", [b"-p", db], with_flags=False)
case("automation-id", "sarif", [b"--automation-id=run\xff/", latin])
