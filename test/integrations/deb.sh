#!/usr/bin/env bash
# The Debian package: `cpack -G DEB` builds it from the build tree; dpkg installs it into a scratch
# root (its own dpkg database, dependencies taken from this machine); the installed driver, the
# plugin through the installed clang-tidy-torch wrapper, and the docs all work from there.
# Usage: deb.sh SOURCE_ROOT BUILD_DIR TORCH_INCLUDE TORCH_PCH
src="$1" build="$2" inc="$3" pch="$4"
. "$(dirname "$0")/lib.sh"

(cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg") >"$tmp/cpack.log" 2>&1 \
  || { cat "$tmp/cpack.log"; fail "cpack -G DEB failed"; }
deb="$(ls "$tmp"/pkg/*.deb)"
echo "built $(basename "$deb")"
[ "$(dpkg-deb -f "$deb" Package)" = torchtidy ] || fail "package name is not torchtidy"
dpkg-deb -f "$deb" Depends | grep -q 'clang-tidy-[0-9]' || fail "the package does not depend on clang-tidy"
dpkg-deb -c "$deb" >"$tmp/contents.txt"
for f in ./usr/bin/torchtidy ./usr/bin/clang-tidy-torch ./usr/bin/torchtidy-pre-commit \
         ./usr/share/doc/torchtidy/README.md ./usr/share/doc/torchtidy/checks/inplace-on-leaf.md; do
  grep -q " $f\$" "$tmp/contents.txt" || { cat "$tmp/contents.txt"; fail "$f is not in the package"; }
done
grep -q '/libTorchTidy\.so$' "$tmp/contents.txt" || fail "the plugin is not in the package"

# Install into a scratch root with its own dpkg database (nothing of this machine's changes).
root="$tmp/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
touch "$root/var/lib/dpkg/status"
dpkg --root="$root" --force-depends --force-not-root --log=/dev/null -i "$deb" >"$tmp/dpkg.log" 2>&1 \
  || { cat "$tmp/dpkg.log"; fail "dpkg -i into the scratch root failed"; }
grep -q '^Status: install ok installed' "$root/var/lib/dpkg/status" || fail "dpkg did not record the install"

cp "$src/test/integrations/Inputs/train_bad.cpp" "$tmp/bad.cpp"
set +e
"$root/usr/bin/torchtidy" "$tmp/bad.cpp" -- -std=c++17 -isystem "$inc" -include-pch "$pch" >"$tmp/driver.log" 2>&1
rc=$?
set -e
cat "$tmp/driver.log"
[ "$rc" = 1 ] || fail "the installed torchtidy exited $rc on a finding, expected 1"
grep -Eq 'bad\.cpp:7:[0-9]+: error: .*\[torch-inplace-on-leaf\]' "$tmp/driver.log" || fail "installed driver: no finding"

set +e
"$root/usr/bin/clang-tidy-torch" --checks='-*,torch-*' "$tmp/bad.cpp" -- -std=c++17 -isystem "$inc" -include-pch "$pch" >"$tmp/plugin.log" 2>&1
set -e
grep -Eq 'bad\.cpp:7:[0-9]+: warning: .*\[torch-inplace-on-leaf\]' "$tmp/plugin.log" \
  || { cat "$tmp/plugin.log"; fail "installed clang-tidy-torch: no finding"; }
echo "PASS: deb"
