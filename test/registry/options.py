"""Fails when a check's stored options and the Options table of its docs page disagree."""
import os
import re
import sys

root, dump = sys.argv[1], sys.argv[2]
stored = {}
for line in open(dump):
    m = re.match(r"\s+(torch-[a-z0-9-]+)\.(\w+):\s*'?(.*?)'?\s*$", line)
    if m:
        stored.setdefault(m.group(1), {})[m.group(2)] = m.group(3)
problems = []
if not stored:
    problems.append("no torch-* options in the dump")
for check, options in sorted(stored.items()):
    page = os.path.join(root, "docs", "checks", check[len("torch-"):] + ".md")
    text = open(page).read()
    section = re.search(r"^## Options\n(.*?)(?=^## )", text, re.S | re.M)
    rows = {}
    for row in (section.group(1) if section else "").splitlines():
        m = re.match(r"\| `(\w+)` \| `(.*?)` \|", row)
        if m:
            rows[m.group(1)] = m.group(2).replace("\\|", "|")
    for name, value in options.items():
        if name not in rows:
            problems.append(f"{check}: option {name} (default {value}) not listed in {page}")
        elif rows[name] != value:
            problems.append(f"{check}: {name} defaults to {value!r}, {page} says {rows[name]!r}")
    for name in rows.keys() - options.keys():
        problems.append(f"{check}: {page} lists {name}, which the check does not have")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
