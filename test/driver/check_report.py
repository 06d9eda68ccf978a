#!/usr/bin/env python3
"""Asserts the structure of a torchtidy JSON or SARIF report; for SARIF also runs
`sarif-multitool validate` and fails on any error it reports (the tool itself exits 0).

Usage: check_report.py sarif|json REPORT [--validator PATH] [--results N]
                        [--notifications N] [--fixes]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import registry  # noqa: E402

# One severity per check: a torch check's findings carry its registry level in every format.
LEVELS = {c["id"]: ("remark" if c["level"] == "note" else c["level"]) for c in registry.checks()}


def fail(msg):
    print(f"check_report: FAIL: {msg}")
    sys.exit(1)


def need(cond, msg):
    if not cond:
        fail(msg)


def check_sarif(doc, args):
    need(doc.get("version") == "2.1.0", "version is not 2.1.0")
    need(len(doc["runs"]) == 1, "expected exactly one run")
    run = doc["runs"][0]
    drv = run["tool"]["driver"]
    for key in ("name", "version", "informationUri", "rules"):
        need(key in drv, f"tool.driver lacks {key}")
    ids = [r["id"] for r in drv["rules"]]
    need(any(i.startswith("torch-") for i in ids), "no torch-* rules")
    for rule in drv["rules"]:
        if not rule["id"].startswith("torch-"):
            continue
        for key in ("name", "shortDescription", "fullDescription", "help", "helpUri",
                    "defaultConfiguration", "properties"):
            need(key in rule, f"rule {rule['id']} lacks {key}")
        need("text" in rule["help"] and "markdown" in rule["help"], "help lacks text/markdown")
        props = rule["properties"]
        for key in ("tags", "precision", "problem.severity"):
            need(key in props, f"rule {rule['id']} properties lack {key}")
        need("security-severity" not in props, "security-severity must not be set")
    need(run["automationDetails"]["id"], "automationDetails.id is empty")
    need("SRCROOT" in run["originalUriBaseIds"], "no SRCROOT base id")
    inv = run["invocations"]
    need(inv and "executionSuccessful" in inv[0], "invocations[0].executionSuccessful missing")
    notes = [n for i in inv for n in i.get("toolExecutionNotifications", [])]
    if args.notifications is not None:
        need(len(notes) == args.notifications,
             f"expected {args.notifications} notifications, got {len(notes)}")
        need(all(i["executionSuccessful"] == (not i.get("toolExecutionNotifications"))
                 for i in inv), "executionSuccessful disagrees with notifications")
    results = run["results"]
    if args.results is not None:
        need(len(results) == args.results, f"expected {args.results} results, got {len(results)}")
    for res in results:
        need(ids[res["ruleIndex"]] == res["ruleId"], "ruleIndex does not point at ruleId")
        for key in ("level", "message", "locations", "partialFingerprints"):
            need(key in res, f"result lacks {key}")
        loc = res["locations"][0]["physicalLocation"]
        need(loc["artifactLocation"].get("uriBaseId") == "SRCROOT", "uri is not SRCROOT-relative")
        need(not loc["artifactLocation"]["uri"].startswith("/"), "uri is absolute")
        for key in ("startLine", "startColumn", "endLine", "endColumn"):
            need(key in loc["region"], f"region lacks {key}")
        need("primaryLocationLineHash" in res["partialFingerprints"], "no primaryLocationLineHash")
        if res["ruleId"] in LEVELS and res["level"] != "error":
            need(res["level"] == LEVELS[res["ruleId"]].replace("remark", "note"),
                 f"{res['ruleId']}: level {res['level']}, registry {LEVELS[res['ruleId']]}")
        need(res.get("relatedLocations"), "result has no relatedLocations for its notes")
    if args.fixes:
        need(any("fixes" in r for r in results), "no result carries fixes")
    if args.validator:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "validation.sarif")
            proc = subprocess.run([args.validator, "validate", args.report, "-o", out],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            need(os.path.exists(out), f"validator produced no output:\n{proc.stdout}")
            with open(out) as f:
                val = json.load(f)
            errors = [r for run in val["runs"] for r in run.get("results", [])
                      if r.get("level", "warning") == "error"]
            for e in errors:
                print(f"validator error {e['ruleId']}: {e['message'].get('text', e['message'])}")
            need(not errors, f"{len(errors)} validation error(s)")
            print("validator: 0 errors")


def check_json(doc, args):
    need(doc.get("version") == 1, "version is not 1")
    for key in ("tool", "sourceRoot", "findings", "notifications", "summary"):
        need(key in doc, f"report lacks {key}")
    for f in doc["findings"]:
        for key in ("check", "level", "message", "file", "line", "column", "endLine",
                    "endColumn", "uri", "fingerprint", "notes", "fixes"):
            need(key in f, f"finding lacks {key}")
        if f["check"] in LEVELS and f["level"] != "error":
            need(f["level"] == LEVELS[f["check"]], f"{f['check']}: level {f['level']}, registry {LEVELS[f['check']]}")
        if f["check"] in LEVELS and LEVELS[f["check"]] == "error":
            need(f["level"] == "error", f"{f['check']}: level {f['level']}, registry error")
    if args.results is not None:
        need(len(doc["findings"]) == args.results,
             f"expected {args.results} findings, got {len(doc['findings'])}")
        need(doc["summary"]["findings"] == args.results, "summary.findings disagrees")
    if args.notifications is not None:
        need(len(doc["notifications"]) == args.notifications,
             f"expected {args.notifications} notifications, got {len(doc['notifications'])}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kind", choices=["sarif", "json"])
    p.add_argument("report")
    p.add_argument("--validator")
    p.add_argument("--results", type=int)
    p.add_argument("--notifications", type=int)
    p.add_argument("--fixes", action="store_true")
    args = p.parse_args()
    with open(args.report) as f:
        doc = json.load(f)
    (check_sarif if args.kind == "sarif" else check_json)(doc, args)
    print(f"check_report: {args.kind} ok")


main()
