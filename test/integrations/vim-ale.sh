#!/usr/bin/env bash
# End-to-end editor test: Vim (vim-nox) with ALE from Debian, headless, configured by the
# shipped integrations/editors/vim/torchtidy.vim (ALE's stock clangtidy linter running
# clang-tidy-torch from PATH, compile_commands.json found by ALE in build/), lints a file with
# a torchtidy finding: the finding must appear in Vim's location list; the fixed twin gets none.
# Usage: vim-ale.sh SOURCE_ROOT CLANG_TIDY_TORCH TORCH_INCLUDE TORCH_PCH
src="$1" wrapper="$2" inc="$3" pch="$4"
. "$(dirname "$0")/lib.sh"
inputs="$src/test/integrations/Inputs"

export TORCHTIDY_SRC="$src" PATH="$(dirname "$wrapper"):$PATH"
mkdir -p "$tmp/project"
cp "$inputs/train_bad.cpp" "$tmp/project/bad.cpp"
cp "$inputs/train_fixed.cpp" "$tmp/project/fixed.cpp"
write_compile_db "$tmp/project/build" "$inc" "$pch" bad.cpp fixed.cpp

lint() {
  export ALE_OUT="$tmp/$1.loclist"
  rm -f "$ALE_OUT"
  (cd "$tmp/project" && HOME="$tmp" vim -N -u "$src/test/integrations/ale.vim" -i NONE -n -Es "$1.cpp") \
    </dev/null || true
  [ -f "$ALE_OUT" ] || fail "vim did not write the location list for $1.cpp"
  echo "location list for $1.cpp:"
  sed 's/^/  /' "$ALE_OUT"
  if grep -q '^TIMEOUT' "$ALE_OUT"; then fail "ALE did not finish linting $1.cpp"; fi
}

lint bad
grep -Eq '^7:[0-9]+:[EW]:.*torch-inplace-on-leaf' "$tmp/bad.loclist" \
  || fail "torch-inplace-on-leaf at line 7 missing from the location list of bad.cpp"
lint fixed
if grep -q 'torch-' "$tmp/fixed.loclist"; then fail "torchtidy diagnostic on fixed.cpp"; fi
echo "PASS: vim + ALE"
