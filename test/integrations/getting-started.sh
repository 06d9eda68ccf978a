#!/usr/bin/env bash
# Follows docs/getting-started.md as a new user would: installs torchtidy into a fresh prefix
# on PATH, runs the sample-project block of the page verbatim in a fresh HOME, and checks the
# finding and exit status it promises. Then runs the CI recipes on that project: the SARIF
# command of integrations/github-actions/torchtidy.yml and the JSON -> GitLab Code Quality
# conversion of integrations/gitlab/gitlab-ci.yml.
# Usage: getting-started.sh SOURCE_ROOT BUILD_DIR TORCH_PCH
src="$1" build="$2" pch="$3"
. "$(dirname "$0")/lib.sh"

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
export PATH="$tmp/prefix/bin:$PATH" HOME="$tmp/home"
mkdir -p "$HOME"

python3 - "$src/docs/getting-started.md" "$tmp/sample.sh" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r"<!-- test/integrations/getting-started.sh runs the next block verbatim -->\n```sh\n(.*?)\n```", text, re.S)
if not m:
    sys.exit("FAIL: marked sample block not found in docs/getting-started.md")
open(sys.argv[2], "w").write(m.group(1) + "\n")
PY
# Plain bash, as pasted into a terminal: the block itself shows the exit status.
(cd "$HOME" && bash "$tmp/sample.sh") >"$tmp/sample.log" 2>&1 || true
cat "$tmp/sample.log"
grep -Eq '(^|/)src/train\.cpp:5:[0-9]+: (warning|error): .*\[torch-inplace-on-leaf[],]' "$tmp/sample.log" \
  || fail "the page promises a torch-inplace-on-leaf finding on src/train.cpp:5"
grep -qx 'exit status: 1' "$tmp/sample.log" || fail "the page promises exit status 1"

# The CI runs, with the test PCH (which needs strict -std=c++17) so they take seconds.
cd "$HOME/try-torchtidy"
cmake -S . -B build -DCMAKE_CXX_EXTENSIONS=OFF "-DCMAKE_CXX_FLAGS=-include-pch $pch" >/dev/null
git init -q && git add -A && git commit -q -m sample   # SARIF paths are relative to the repository

rc=0; torchtidy -p build --format=sarif -o torchtidy.sarif || rc=$?
[ "$rc" = 1 ] || fail "torchtidy --format=sarif exited $rc, expected 1 (findings)"
python3 - torchtidy.sarif <<'PY' || fail "SARIF report lacks the finding"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
hits = [r for r in run["results"] if r["ruleId"] == "torch-inplace-on-leaf"
        and r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/train.cpp"
        and r["locations"][0]["physicalLocation"]["region"]["startLine"] == 5]
print("sarif results:", len(run["results"]), "matching:", len(hits))
sys.exit(0 if hits else 1)
PY

rc=0; torchtidy -p build --format=json -o torchtidy.json || rc=$?
[ "$rc" = 1 ] || fail "torchtidy --format=json exited $rc, expected 1 (findings)"
torchtidy-codequality torchtidy.json > gl-code-quality-report.json
python3 - gl-code-quality-report.json <<'PY' || fail "GitLab Code Quality report lacks the finding"
import json, sys
issues = json.load(open(sys.argv[1]))
print(json.dumps(issues, indent=1))
ok = [i for i in issues if i["check_name"] == "torch-inplace-on-leaf"
      and i["location"] == {"path": "src/train.cpp", "lines": {"begin": 5}}
      and i["severity"] in ("info", "minor", "major", "critical", "blocker") and i["fingerprint"]]
sys.exit(0 if ok else 1)
PY
echo "PASS: getting started"
