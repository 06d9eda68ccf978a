"""The proof of torchtidy's fix-its, for scripts/confirm --fixits.

For every corpus program bad*.cpp of a check listed in FIXITS, a copy gets the check's fix-its
applied (`torchtidy --fix`, or `--fix-notes` where the fix hangs on a note because the user
must choose), and must then:
  (a) compile against LibTorch 1.13 and 2.6 (-fsyntax-only, with the flags of the corpus
      compile databases), then build, link and run against 1.13 in the harness build, as
      fixit_<variant> (a program that needs a CUDA LibTorch is built only by --device cuda);
  (b) leave torchtidy silent for that check;
  (c) be judged by the check's rule as its hand-written fixed twin is (scripts/confirm).
The copies live in <harness build>/fixits/<check>/fixit_<variant>.cpp, each with its diff.
"""
import concurrent.futures
import difflib
import json
import pathlib
import re
import shutil
import subprocess

# Check (corpus folder) -> the option that applies its fix-it.
FIXITS = {
    "backward-without-zero-grad": "--fix",
    "discarded-result": "--fix",
    "eval-without-no-grad": "--fix",
    "from-blob-dangling": "--fix",
    "grad-mode-not-inherited-by-thread": "--fix",
    "graph-cached-in-member": "--fix",
    "hidden-state-not-detached": "--fix",
    "inplace-on-leaf": "--fix",
    "loss-accumulated-as-tensor": "--fix",
    "loss-stored-in-container": "--fix",
    "train-not-restored-after-eval": "--fix",
    "empty-cache-in-loop": "--fix-notes",
    "jit-load-in-loop": "--fix-notes",
    "optimizer-constructed-in-loop": "--fix-notes",
    "zero-grad-between-backward-and-step": "--fix-notes",
}
# Programs of those checks that get no fix-it on purpose, and why: the proof expects none.
NO_FIXIT = {
    ("loss-stored-in-container", "bad_member"):
        "the container is a member: the model treats its uses as partly out of sight, so no rewrite",
}
PREFIX = "fixit_"
PROOFS = "proofs.json"


def _flags(db, source):
    """The compile flags of `source` in a compile database, without compiler, -c, -o, file."""
    entry = db.get(str(source))
    if entry is None:
        return None, None
    args, out, skip = entry["arguments"], [], False
    for arg in args[1:]:
        if skip:
            skip = False
        elif arg == "-o":
            skip = True
        elif arg != "-c" and arg != str(source):
            out.append(arg)
    return args[0], out


def _load_db(path):
    if not path or not pathlib.Path(path).exists():
        return {}
    return {entry["file"]: entry for entry in json.loads(pathlib.Path(path).read_text())}


def _findings(text, check):
    return [line for line in text.splitlines()
            if re.search(r": (warning|error): .*\[([\w.,-]*,)?torch-" + re.escape(check) + r"(,[\w.,-]*)?\]$", line)]


def _prove(source, dest, check, option, torchtidy, db1, db2):
    """Applies and checks one program's fix-it; returns its record."""
    record = {"check": check, "variant": PREFIX + source.stem, "option": option, "problems": []}
    compiler, flags = _flags(db1, source)
    if flags is None:
        record["problems"].append(f"{source} is not in the corpus compile database")
        return record
    shutil.copyfile(source, dest)
    tidy = [torchtidy, f"--checks=-*,torch-{check}", "--quiet", "--findings-exit-code=0"]
    fix = subprocess.run(tidy + [option, str(dest), "--"] + flags, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    before, after = source.read_text(), dest.read_text()
    record["diff"] = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                                  f"a/{source.name}", f"b/{source.name}"))
    dest.with_suffix(".diff").write_text(record["diff"])
    if fix.returncode != 0:
        record["problems"].append(f"torchtidy {option} exited {fix.returncode}:\n{fix.stdout[-1500:]}")
    if before == after:
        record["problems"].append(f"torchtidy {option} changed nothing")
        return record
    # (b) silent for the check on the fixed program.
    again = subprocess.run(tidy + [str(dest), "--"] + flags, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    left = _findings(again.stdout, check)
    record["silent"] = not left and again.returncode == 0
    if left or again.returncode != 0:
        record["problems"].append("torchtidy still reports on the fixed program:\n" + (
            "\n".join(left) or again.stdout[-1500:]))
    # (a) parses against LibTorch 1.13 and 2.6; the harness then builds, links and runs it
    # against 1.13 (a program that would break that build is left out of it).
    record["compiles"] = {}
    for version, db in (("1.13", db1), ("2.6", db2)):
        cxx, version_flags = _flags(db, source)
        if version_flags is None:
            record["problems"].append(f"no LibTorch {version} compile database entry for {source}")
            continue
        proc = subprocess.run([cxx] + version_flags + ["-fsyntax-only", str(dest)], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        record["compiles"][version] = proc.returncode == 0
        if proc.returncode != 0:
            record["problems"].append(f"the fixed program does not compile against LibTorch {version}:\n"
                                      f"{proc.stdout[-1500:]}")
    return record


def prepare(root, out_dir, torchtidy, db1, db2, jobs):
    """Writes the fixed copies under out_dir; returns {(check, variant): record}."""
    corpus = root / "corpus"
    out_dir.mkdir(parents=True, exist_ok=True)
    probe = out_dir / "probe"
    if not probe.exists():
        probe.symlink_to(corpus / "probe", target_is_directory=True)
    db1, db2 = _load_db(db1), _load_db(db2)
    work = []
    for check, option in sorted(FIXITS.items()):
        (out_dir / check).mkdir(exist_ok=True)
        for stale in (out_dir / check).glob(PREFIX + "*"):
            stale.unlink()
        for source in sorted((corpus / check).glob("bad*.cpp")):
            if (check, source.stem) in NO_FIXIT:
                continue
            work.append((source.resolve(), out_dir / check / f"{PREFIX}{source.stem}.cpp", check, option))
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        records = list(pool.map(lambda w: _prove(*w, torchtidy, db1, db2), work))
    for (_, dest, _, _), record in zip(work, records):
        if not all(record.get("compiles", {}).values()) or not record.get("compiles"):
            dest.unlink(missing_ok=True)
    # The proof travels with the copies (scripts/confirm --fixits-from, on a machine without
    # the analyzer, such as a GPU machine).
    (out_dir / PROOFS).write_text(json.dumps(records, indent=1) + "\n")
    return {(r["check"], r["variant"]): r for r in records}


def load(root, proof_dir, out_dir):
    """Takes the copies and the proof that prepare() wrote into proof_dir (on another machine,
    or earlier) into out_dir; returns prepare()'s records."""
    proof_dir = proof_dir.resolve()
    try:
        records = json.loads((proof_dir / PROOFS).read_text())
    except (OSError, ValueError) as error:
        raise ValueError(f"{proof_dir} holds no fix-it proof ({PROOFS}: {error}); "
                         f"scripts/confirm --fixits writes one into <build dir>/fixits") from None
    if proof_dir != out_dir.resolve():
        shutil.rmtree(out_dir, ignore_errors=True)
        shutil.copytree(proof_dir, out_dir, symlinks=True, ignore=shutil.ignore_patterns("probe"))
    probe = out_dir / "probe"
    if probe.is_symlink() or probe.exists():
        probe.unlink()
    probe.symlink_to(root / "corpus" / "probe", target_is_directory=True)
    return {(r["check"], r["variant"]): r for r in records}
