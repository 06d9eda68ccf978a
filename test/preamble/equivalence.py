#!/usr/bin/env python3
"""The LibTorch preamble changes nothing: every given program analyzed with plain compile
flags (no PCH), once without the preamble (--no-cache) and once through it (a fresh cache:
one preamble built, then shared), must give byte-identical JSON reports (every torch check
enabled, findings in project headers included). Fails as well when the preamble served
fewer than --min-share of the programs, so that it cannot pass by never applying.

  equivalence.py --driver BIN [--jobs 2] [--min-share 0.9] FILE... -- FLAGS...
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile


def main():
    argv = sys.argv[1:]
    flags = []
    if "--" in argv:
        flags = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--driver", required=True)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--min-share", type=float, default=0.9)
    p.add_argument("files", nargs="+")
    a = p.parse_args(argv)
    files = [pathlib.Path(f).resolve() for f in a.files]
    with tempfile.TemporaryDirectory(prefix="torchtidy-equivalence-") as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "compile_commands.json").write_text(json.dumps(
            [{"directory": str(f.parent), "file": str(f), "arguments": ["clang++", *flags, "-c", str(f)]}
             for f in files]))
        common = [a.driver, "--checks=-*,torch-*", "--header-filter=.*", "--format=json",
                  "--findings-exit-code=0", f"-j{a.jobs}", "-p", str(tmp)]
        plain = subprocess.run(common + ["--no-cache", "-o", str(tmp / "plain.json")],
                               stderr=subprocess.PIPE, text=True)
        shared = subprocess.run(common + [f"--cache-dir={tmp / 'cache'}", "--cache-stats",
                                          "-o", str(tmp / "shared.json")], stderr=subprocess.PIPE, text=True)
        for name, proc in (("plain", plain), ("shared", shared)):
            if proc.returncode != 0:
                sys.exit(f"equivalence: the {name} run failed (exit {proc.returncode}):\n{proc.stderr}")
        stats = re.search(r"preambles: (\d+) built, (\d+) reused", shared.stderr)
        served = int(stats[1]) + int(stats[2]) if stats else 0
        a_bytes, b_bytes = (tmp / "plain.json").read_bytes(), (tmp / "shared.json").read_bytes()
        report = json.loads(a_bytes)
        count = len(report.get("findings", []))
        print(f"equivalence: {len(files)} programs, {count} findings; the preamble served {served}")
        if a_bytes != b_bytes:
            a_lines, b_lines = a_bytes.decode(errors="replace").splitlines(), b_bytes.decode(errors="replace").splitlines()
            for i, (x, y) in enumerate(zip(a_lines, b_lines)):
                if x != y:
                    sys.exit(f"equivalence: reports differ at line {i + 1}:\n  plain:  {x}\n  shared: {y}")
            sys.exit(f"equivalence: reports differ in length ({len(a_lines)} against {len(b_lines)} lines)")
        if served < a.min_share * len(files):
            sys.exit(f"equivalence: the preamble served {served} of {len(files)} programs")


main()
