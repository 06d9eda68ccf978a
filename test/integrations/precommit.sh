#!/usr/bin/env bash
# End-to-end test of the pre-commit hook with the real pre-commit: a commit that stages a
# file with a torchtidy finding is refused with a clang-style diagnostic, the fixed file
# commits, only the staged content is analyzed, and a missing compile database is explained.
# Usage: precommit.sh SOURCE_ROOT TORCHTIDY TORCH_INCLUDE TORCH_PCH
src="$1" driver="$2" inc="$3" pch="$4"
. "$(dirname "$0")/lib.sh"
inputs="$src/test/integrations/Inputs"

# pre-commit clones hook repositories at a commit, so publish the hook files from this
# checkout (committed or not) as a repository of their own.
hooks="$tmp/hooks"
mkdir -p "$hooks/integrations/pre-commit"
cp "$src/.pre-commit-hooks.yaml" "$hooks/"
cp -p "$src/integrations/pre-commit/torchtidy-hook" "$hooks/integrations/pre-commit/"
git -C "$hooks" init -q
git -C "$hooks" add -A
git -C "$hooks" commit -q -m hooks
rev="$(git -C "$hooks" rev-parse HEAD)"

proj="$tmp/project"
mkdir -p "$proj"
cd "$proj"
git init -q
printf 'build/\n' > .gitignore
cat > .pre-commit-config.yaml <<YAML
repos:
  - repo: $hooks
    rev: $rev
    hooks:
      - id: torchtidy
YAML
git add .gitignore .pre-commit-config.yaml
git commit -q -m config
pre-commit install >/dev/null
write_compile_db build "$inc" "$pch" train.cpp

export TORCHTIDY="$driver"

cp "$inputs/train_bad.cpp" train.cpp
git add train.cpp
if git commit -m bad >"$tmp/bad.log" 2>&1; then
  cat "$tmp/bad.log"; fail "commit of a file with a finding was accepted"
fi
cat "$tmp/bad.log"
grep -Eq '(^|/)train\.cpp:7:[0-9]+: (warning|error): .*\[torch-inplace-on-leaf[],]' "$tmp/bad.log" \
  || fail "no clang-style torch-inplace-on-leaf diagnostic for train.cpp:7 in the hook output"
[ "$(git rev-list --count HEAD)" = 1 ] || fail "the bad commit was recorded"

# Stage the fixed file but leave the bad one in the working tree: the hook must see the
# staged content only (pre-commit stashes unstaged changes).
cp "$inputs/train_fixed.cpp" train.cpp
git add train.cpp
cp "$inputs/train_bad.cpp" train.cpp
if ! git commit -m fixed >"$tmp/fixed.log" 2>&1; then
  cat "$tmp/fixed.log"; fail "commit of the fixed file was refused"
fi
cat "$tmp/fixed.log"
grep -q 'torch-' "$tmp/fixed.log" && fail "diagnostic reported for the fixed (staged) file"
[ "$(git rev-list --count HEAD)" = 2 ] || fail "the fixed commit was not recorded"
cmp -s train.cpp "$inputs/train_bad.cpp" || fail "pre-commit lost the unstaged working-tree change"

# Without a compile database the hook must refuse and say why (try-repo: the ad-hoc route).
rm -rf build
if pre-commit try-repo "$hooks" torchtidy --files train.cpp >"$tmp/nodb.log" 2>&1; then
  cat "$tmp/nodb.log"; fail "hook passed without a compile database"
fi
cat "$tmp/nodb.log"
grep -q 'no compilation database' "$tmp/nodb.log" || fail "missing compile database not explained"
grep -q 'CMAKE_EXPORT_COMPILE_COMMANDS=ON' "$tmp/nodb.log" || fail "no hint how to generate one"
echo "PASS: pre-commit hook"
