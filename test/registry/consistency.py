#!/usr/bin/env python3
"""Fails when a registered check lacks its test, docs page, corpus entry or index line."""
import json
import os
import sys

ROOT = sys.argv[1]
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import registry  # noqa: E402

problems = []
for c in registry.checks(ROOT):
    cid, name = c["id"], c["name"]
    for rel in ("checks/%s.h" % c["cls"], "checks/%s.cpp" % c["cls"]):
        if not os.path.exists(os.path.join(ROOT, rel)):
            problems.append("%s: missing %s" % (cid, rel))
    test = os.path.join(ROOT, "test", "checks", name + ".cpp")
    if not os.path.exists(test):
        problems.append("%s: missing test test/checks/%s.cpp" % (cid, name))
    else:
        text = open(test).read()
        if "[%s]" % cid not in text:
            problems.append("%s: test/checks/%s.cpp expects no finding of the check" % (cid, name))
        if "negative" not in text:
            problems.append("%s: test/checks/%s.cpp has no negative cases" % (cid, name))
    doc = os.path.join(ROOT, "docs", "checks", name + ".md")
    if not os.path.exists(doc):
        problems.append("%s: missing docs page docs/checks/%s.md" % (cid, name))
    elif not open(doc).read().startswith("# " + cid):
        problems.append("%s: docs/checks/%s.md must start with '# %s'" % (cid, name, cid))
    manifest = os.path.join(ROOT, "corpus", name, "manifest.json")
    if not os.path.exists(manifest):
        problems.append("%s: missing corpus entry corpus/%s/manifest.json" % (cid, name))
    else:
        data = json.load(open(manifest))
        if not any(v for v in data.get("programs", {}).values()):
            problems.append("%s: corpus/%s has no bad program with an expected finding" % (cid, name))
index = open(os.path.join(ROOT, "docs", "checks", "index.md")).read()
for c in registry.checks(ROOT):
    if "`%s`" % c["id"] not in index:
        problems.append("%s: not in docs/checks/index.md (run scripts/gen-docs-index)" % c["id"])
# The recommended .clang-tidy (for the plugin, which cannot compute defaults) enables the default set.
for line in open(os.path.join(ROOT, "integrations", ".clang-tidy")):
    if line.startswith("Checks:"):
        glob = line.split(":", 1)[1].strip().strip("'\"")
        if glob != registry.default_glob(ROOT):
            problems.append("integrations/.clang-tidy: Checks must be '%s'" % registry.default_glob(ROOT))
    # Stock clang-tidy reports every check finding as a warning: WarningsAsErrors gives the
    # registry's error-level checks their level in the plugin and the editors too.
    if line.startswith("WarningsAsErrors:"):
        listed = sorted(line.split(":", 1)[1].strip().strip("'\"").split(","))
        errors = sorted(c["id"] for c in registry.checks(ROOT) if c["level"] == "error")
        if listed != errors:
            problems.append("integrations/.clang-tidy: WarningsAsErrors must be '%s'" % ",".join(errors))
for p in problems:
    print("consistency: " + p)
print("consistency: %d checks, %d problems" % (len(registry.checks(ROOT)), len(problems)))
sys.exit(1 if problems else 0)
