"""Compares clang-tidy's findings other than torch-* between two runs (alone, with torch-*).

Fails when they differ, and when the comparison would be vacuous: too few upstream findings, no
torch finding in the second run, or no finding of a check that reads declarations of system
headers (bugprone-forward-declaration-namespace, the one a narrowed traversal would silence).
"""
import re
import sys

FINDING = re.compile(r"^(\S+:\d+:\d+): (warning|error): (.*) \[([\w.,-]+)\]$")


def findings(path):
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = FINDING.match(line.rstrip("\n"))
            if m:
                out.append((m.group(1), m.group(4), m.group(3)))
    return sorted(out)


alone = findings(sys.argv[1])
both = findings(sys.argv[2])
others = [f for f in both if not f[1].startswith("torch-")]
torch = [f for f in both if f[1].startswith("torch-")]
missing = sorted(set(alone) - set(others))
extra = sorted(set(others) - set(alone))
for f in missing:
    print("only without torch-*:", *f)
for f in extra:
    print("only with torch-*:", *f)
print("%d upstream findings alone, %d with torch-* (+%d torch)" % (len(alone), len(others), len(torch)))
checks = {c for f in alone for c in f[1].split(",")}
if missing or extra or alone != others:
    sys.exit("the upstream checks' findings differ when torch-* is enabled")
if len(alone) < 10 or not torch or "bugprone-forward-declaration-namespace" not in checks:
    sys.exit("vacuous comparison: %s" % sorted(checks))
