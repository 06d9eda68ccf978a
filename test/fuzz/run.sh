#!/usr/bin/env bash
# Builds the fuzz targets (reports and compile databases, cache entries, LSP messages) with
# clang-16 and runs each for a bounded time from its committed seed corpus.
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
# Each target runs for the given time from its committed seeds, copied so that new inputs
# never land in the source tree. LLVM's own allocations outlive a fuzz iteration on
# purpose (ManagedStatic, cl::opt).
for target in reader:corpus cache_entry:corpus-cache lsp:corpus-lsp; do
  name="${target%%:*}" seeds="${target#*:}"
  rm -rf "$build/$seeds" && cp -r "$src/$seeds" "$build/$seeds"
  ASAN_OPTIONS=detect_leaks=0 "$build/${name}_fuzzer" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 "$build/$seeds"
done
