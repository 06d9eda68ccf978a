#!/usr/bin/env bash
# Builds the reader fuzzer with clang-16 and runs it for a bounded time from the
# committed seed corpus (copied, so that new inputs never land in the source tree).
# Usage: run.sh <build-dir> <clang++> <seconds>
set -euo pipefail
src="$(cd "$(dirname "$0")" && pwd)"
build="$1" cxx="$2" seconds="$3"
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$src" -B "$build" "${gen[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="${cxx%++}" >/dev/null
fi
cmake --build "$build" >/dev/null
rm -rf "$build/corpus" && cp -r "$src/corpus" "$build/corpus"
# LLVM's own allocations outlive a fuzz iteration on purpose (ManagedStatic, cl::opt).
ASAN_OPTIONS=detect_leaks=0 "$build/reader_fuzzer" -max_total_time="$seconds" -timeout=10 \
  -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 "$build/corpus"
