#!/usr/bin/env bash
# `cmake --install` into a fresh prefix must yield a working driver, plugin, clang-tidy-torch
# wrapper and pre-commit hook script; the wrapper must keep working when the prefix is moved
# and when it is called through a symlink (how users put it on PATH).
# Usage: install.sh SOURCE_ROOT BUILD_DIR TORCH_INCLUDE TORCH_PCH
src="$1" build="$2" inc="$3" pch="$4"
. "$(dirname "$0")/lib.sh"
inputs="$src/test/integrations/Inputs"

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install failed"; }
mv "$tmp/prefix" "$tmp/moved"
prefix="$tmp/moved"
for f in bin/torchtidy bin/clang-tidy-torch bin/torchtidy-pre-commit; do
  [ -x "$prefix/$f" ] || fail "$f not installed"
done
plugin="$(find "$prefix" -name libTorchTidy.so)"
[ -n "$plugin" ] || fail "libTorchTidy.so not installed"
echo "installed: $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')"

mkdir -p "$tmp/userbin"
ln -s "$prefix/bin/clang-tidy-torch" "$tmp/userbin/clang-tidy-torch"
"$tmp/userbin/clang-tidy-torch" --checks='-*,torch-*' --list-checks >"$tmp/list.log" 2>&1 \
  || { cat "$tmp/list.log"; fail "clang-tidy-torch --list-checks failed"; }
n="$(grep -c '^ *torch-' "$tmp/list.log" || true)"
[ "$n" -ge 5 ] || { cat "$tmp/list.log"; fail "clang-tidy-torch lists $n torch checks, expected at least 5"; }
echo "clang-tidy-torch lists $n torch checks"

# The project uses the shipped example configuration, which enables the torch checks.
mkdir -p "$tmp/project"
cp "$src/integrations/.clang-tidy" "$tmp/project/.clang-tidy"
cp "$inputs/train_bad.cpp" "$tmp/project/bad.cpp"
write_compile_db "$tmp/project/build" "$inc" "$pch" bad.cpp
cd "$tmp/project"

# The wrapper as an editor runs it: a file and -p, checks from .clang-tidy.
set +e
"$tmp/userbin/clang-tidy-torch" -p build bad.cpp >"$tmp/wrapper.log" 2>&1
set -e
grep -Eq 'bad\.cpp:7:[0-9]+: (warning|error): .*\[torch-inplace-on-leaf[],]' "$tmp/wrapper.log" \
  || { cat "$tmp/wrapper.log"; fail "installed clang-tidy-torch did not report torch-inplace-on-leaf"; }

# The hook script as a `language: system` hook runs it: the installed driver found on PATH.
set +e
PATH="$prefix/bin:$PATH" torchtidy-pre-commit -p build bad.cpp >"$tmp/hook.log" 2>&1
rc=$?
set -e
cat "$tmp/hook.log"
[ "$rc" = 1 ] || fail "installed hook with the installed driver exited $rc on a finding, expected 1"
grep -Eq 'bad\.cpp:7:[0-9]+: (warning|error): .*\[torch-inplace-on-leaf[],]' "$tmp/hook.log" \
  || fail "installed driver did not report torch-inplace-on-leaf"
echo "PASS: install"
