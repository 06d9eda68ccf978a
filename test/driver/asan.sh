#!/usr/bin/env bash
# Builds torchtidy-asan and runs the driver's lit tests against it, in their own %t tree.
# Usage: asan.sh <build-dir> <python> <lit> <test-binary-dir>
set -euo pipefail
build="$1" python="$2" lit="$3" tests="$4"
cmake --build "$build" --target torchtidy-asan >/dev/null
# halt_on_error: any report fails the test. Leaks are not checked: clang's frontend keeps
# its AST alive until exit by design.
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
exec "$python" "$lit" -sv --param mode=driver --param driver="$build/bin/torchtidy-asan" \
  --param exec_root="$tests/Output-asan" --filter 'driver/' "$tests"
