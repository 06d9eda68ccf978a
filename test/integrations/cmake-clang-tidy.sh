#!/usr/bin/env bash
# CMake's CMAKE_CXX_CLANG_TIDY with the clang-tidy-torch wrapper, in a real CMake build of a
# LibTorch project (find_package(Torch)): findings are printed while the project builds, the
# build passes with warnings, and fails when the recommended .clang-tidy's WarningsAsErrors
# makes a finding an error.
# Usage: cmake-clang-tidy.sh SOURCE_ROOT BUILD_DIR CLANGXX TORCH_PCH
src="$1" build="$2" clangxx="$3" pch="$4"
. "$(dirname "$0")/lib.sh"
wrapper="$build/bin/clang-tidy-torch"
cp -r "$src/test/integrations/Inputs/cmake-project" "$tmp/project"

# clang++-16 with the test PCH compiles (and clang-tidy parses) each TU in a second or two.
configure() { # configure BUILD_SUBDIR CLANG_TIDY_VALUE
  cmake -S "$tmp/project" -B "$tmp/project/$1" -G Ninja -DCMAKE_CXX_COMPILER="$clangxx" \
    "-DTRAINER_EXTRA_FLAGS=-include-pch;$pch" "-DCMAKE_CXX_CLANG_TIDY=$2" >"$tmp/configure-$1.log" 2>&1 \
    || { cat "$tmp/configure-$1.log"; fail "cmake configure failed ($1)"; }
}

# 1. Warnings only (checks from the command line): the build succeeds and shows the finding.
configure warn "$wrapper;--checks=-*,torch-*"
set +e
cmake --build "$tmp/project/warn" >"$tmp/warn.log" 2>&1
rc=$?
set -e
cat "$tmp/warn.log"
[ "$rc" = 0 ] || fail "the build with warnings failed (exit $rc)"
grep -Eq 'train\.cpp:6:[0-9]+: warning: .*\[torch-inplace-on-leaf\]' "$tmp/warn.log" \
  || fail "no torch-inplace-on-leaf warning in the build output"
if grep -q 'data\.cpp:.*\[torch-' "$tmp/warn.log"; then fail "a finding in the clean data.cpp"; fi

# 2. The shipped .clang-tidy (WarningsAsErrors lists the error-level checks): the build fails.
cp "$src/integrations/.clang-tidy" "$tmp/project/.clang-tidy"
configure strict "$wrapper"
set +e
cmake --build "$tmp/project/strict" >"$tmp/strict.log" 2>&1
rc=$?
set -e
cat "$tmp/strict.log"
[ "$rc" != 0 ] || fail "the build passed although WarningsAsErrors covers torch-inplace-on-leaf"
grep -Eq 'train\.cpp:6:[0-9]+: error: .*\[torch-inplace-on-leaf,-warnings-as-errors\]' "$tmp/strict.log" \
  || fail "torch-inplace-on-leaf was not reported as an error"
echo "PASS: cmake-clang-tidy"
