#!/usr/bin/env python3
"""Analyzes every corpus program and compares the torch-* findings with its manifest.

A bad program must yield exactly the findings its manifest lists (check and line), a fixed
program none. Each program is analyzed as a user would: the default set plus the check its
folder demonstrates (opt-in performance checks fire on most training loops by design, so
they are only asked of their own programs). Any compiler error in a corpus program fails too: the corpus must stay real,
compilable LibTorch code.
"""
import argparse
import collections
import concurrent.futures
import json
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
import registry  # noqa: E402

DIAG = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): (?P<kind>warning|error): "
                  r"(?P<message>.*?) \[(?P<checks>[\w.,-]+)\]$")


def analyze(args, program, check):
    if args.mode == "plugin":
        cmd = [args.clang_tidy, f"--load={args.plugin}"]
    else:
        cmd = [args.driver]
    cmd += [f"--checks={registry.default_glob()},{check}", "--quiet", "-p", args.p, str(program)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    findings, errors = [], []
    for line in proc.stdout.splitlines():
        match = DIAG.match(line)
        if not match:
            continue
        for check in match["checks"].split(","):
            if check.startswith("torch-"):
                same_file = pathlib.Path(match["file"]).resolve() == program.resolve()
                where = int(match["line"]) if same_file else f"{match['file']}:{match['line']}"
                findings.append((check, where))
            elif match["kind"] == "error":
                errors.append(line)
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and not findings and not errors):
        errors.append(f"analyzer exited with {proc.returncode}: {' '.join(cmd)}\n{proc.stdout[-2000:]}")
    return findings, errors


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", choices=["plugin", "driver"], required=True)
    parser.add_argument("--corpus", required=True, type=pathlib.Path)
    parser.add_argument("-p", required=True, help="build dir holding the corpus compile_commands.json")
    parser.add_argument("--clang-tidy")
    parser.add_argument("--plugin")
    parser.add_argument("--driver")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()

    if not (pathlib.Path(args.p) / "compile_commands.json").is_file():
        sys.exit(f"no compile database in {args.p} (for LibTorch 2.6: run scripts/setup, "
                 "then configure the build again)")
    expected, checks, problems = {}, {}, []
    for manifest in sorted(args.corpus.glob("*/manifest.json")):
        data = json.loads(manifest.read_text())
        listed = set(data["programs"])
        present = {p.name for p in manifest.parent.glob("*.cpp")}
        for name in sorted(present - listed):
            problems.append(f"{manifest.parent.name}/{name}: not listed in {manifest}")
        for name in sorted(listed - present):
            problems.append(f"{manifest}: lists {name}, which does not exist")
        for name in sorted(listed & present):
            expected[manifest.parent / name] = sorted(
                (f["check"], f["line"]) for f in data["programs"][name])
            checks[manifest.parent / name] = data["check"]
    if not expected:
        problems.append(f"no corpus programs found under {args.corpus}")

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = dict(zip(expected, pool.map(lambda p: analyze(args, p, checks[p]), expected)))

    for program, want in expected.items():
        got, errors = results[program]
        name = program.relative_to(args.corpus)
        missing = sorted((collections.Counter(want) - collections.Counter(got)).elements(), key=str)
        unexpected = sorted((collections.Counter(got) - collections.Counter(want)).elements(), key=str)
        for error in errors:
            problems.append(f"{name}: {error}")
        if missing or unexpected:
            lines = [f"{name}: findings differ from the manifest"]
            lines += [f"  - missing    {check} at line {line}" for check, line in missing]
            lines += [f"  + unexpected {check} at line {line}" for check, line in unexpected]
            problems.append("\n".join(lines))
        status = "ok" if not (missing or unexpected or errors) else "FAIL"
        print(f"{status:4} {name}: expected {len(want)}, got {len(got)}")

    if problems:
        print(f"\n{len(problems)} problem(s) ({args.mode}):", file=sys.stderr)
        for problem in problems:
            print(problem, file=sys.stderr)
        return 1
    print(f"corpus ({args.mode}): {len(expected)} programs match their manifests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
