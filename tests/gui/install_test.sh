#!/usr/bin/env bash
# install_test.sh BUILD_DIR OUTDIR CPACK
# `cmake --install` into a prefix, the prefix moved elsewhere: its binary still finds its lessons
# (teach mode draws its matrices under Xvfb), and stops finding them once share/attnviz is taken
# away (so they were not found through the source tree). Then `cpack -G DEB` builds a package with
# those files and the Debian packages the binary needs as its dependencies.
# Exits 77 (ctest: skipped) only when no X server can be started.
set -euo pipefail
build=$1 out=$2 cpack=$3
rm -rf "$out"
mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$out/prefix" >/dev/null
mv "$out/prefix" "$out/moved"
p="$out/moved"
for f in bin/attnviz share/attnviz/lessons/worked-example.json share/attnviz/examples/worked-example.json \
         share/applications/attnviz.desktop share/icons/hicolor/scalable/apps/attnviz.svg; do
    [ -f "$p/$f" ] || fail "$f is not installed"
done
[ ! -e "$p/share/attnviz/desktop" ] || fail "the desktop files belong in share/applications and share/icons"
grep -q '^Exec=attnviz' "$p/share/applications/attnviz.desktop" || fail "the desktop entry does not run attnviz"
# The installed example sessions are sessions.
"$p/bin/attnviz" compute "$p/share/attnviz/examples/random-6-tokens-rope.json" -o "$out/trace.json"

if ! command -v Xvfb >/dev/null; then
    echo "SKIP: Xvfb is not installed (./scripts/test installs it)"; exit 77
fi
exec 3< <(Xvfb -displayfd 1 -screen 0 1280x800x24 -nolisten tcp 2>/dev/null)
xvfb_pid=$!
trap 'kill $xvfb_pid 2>/dev/null || true' EXIT
display=""
read -r -t 20 display <&3 || true
[ -n "$display" ] || { echo "SKIP: Xvfb could not start an X server"; exit 77; }
export DISPLAY=":$display" LIBGL_ALWAYS_SOFTWARE=1 XDG_CONFIG_HOME="$out/config" XDG_STATE_HOME="$out/state"
unset ATTNVIZ_ASSETS

"$p/bin/attnviz" --teach 1 --screenshot "$out/teach.png" --report "$out/teach.json"
grep -q '"teach: reload the lesson"' "$out/teach.json" && fail "the moved install did not find its lesson"
grep -q '"heatmaps"' "$out/teach.json" || fail "teach mode drew no matrices"
mv "$p/share/attnviz" "$p/share/attnviz-away"
"$p/bin/attnviz" --teach 1 --screenshot "$out/no-lesson.png" --report "$out/no-lesson.json"
grep -q '"teach: reload the lesson"' "$out/no-lesson.json" || fail "without share/attnviz the lesson was still found"
mv "$p/share/attnviz-away" "$p/share/attnviz"
echo "the moved install finds its lessons"

# The Debian package.
(cd "$build" && "$cpack" -G DEB -B "$out/package" >"$out/cpack.log" 2>&1) || { cat "$out/cpack.log"; fail "cpack -G DEB failed"; }
deb=$(ls "$out"/package/attnviz_*.deb)
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for pkg in libglfw3 libgomp1 zlib1g libstb0 libstdc++6 libc6 libgl1 fonts-dejavu-core; do
    grep -q "\b$pkg\b" <<<"$depends" || fail "the package does not depend on $pkg"
done
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/attnviz ./usr/share/attnviz/lessons/worked-example.json ./usr/share/applications/attnviz.desktop; do
    grep -q " $f\$" <<<"$contents" || fail "the package lacks $f"
done
echo "package $(basename "$deb") has its files and dependencies"
