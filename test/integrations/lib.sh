# shellcheck shell=bash
# Shared helpers for the integration tests (sourced). Each test works in its own temporary
# directory and isolates git and pre-commit from the user's configuration.
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }

tmp="$(mktemp -d "${TMPDIR:-/tmp}/torchtidy-integ.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=torchtidy-test GIT_AUTHOR_EMAIL=test@example.invalid
export GIT_COMMITTER_NAME=torchtidy-test GIT_COMMITTER_EMAIL=test@example.invalid
export PRE_COMMIT_HOME="$tmp/pre-commit-cache"
# torchtidy's result cache and preambles: never the user's own ~/.cache/torchtidy.
export XDG_CACHE_HOME="$tmp/cache"
unset TORCHTIDY

# write_compile_db DIR TORCH_INCLUDE PCH FILE...: a compile_commands.json in DIR for FILEs
# (relative to the parent of DIR), with the LibTorch flags and the test PCH for speed.
write_compile_db() {
  local dir="$1" inc="$2" pch="$3"; shift 3
  mkdir -p "$dir"
  local root; root="$(cd "$dir/.." && pwd)"
  python3 - "$dir/compile_commands.json" "$root" "$inc" "$pch" "$@" <<'PY'
import json, sys
out, root, inc, pch, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
db = [{"directory": root, "file": f,
       "arguments": ["clang++", "-std=c++17", "-isystem", inc, "-include-pch", pch, "-c", f]}
      for f in files]
json.dump(db, open(out, "w"), indent=1)
PY
}
