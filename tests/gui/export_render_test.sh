#!/usr/bin/env bash
# export_render_test.sh ATTNVIZ PNG_CHECK OUTDIR
# The exported figures, as a reader sees them: each SVG rendered by librsvg (rsvg-convert, as
# browsers and Inkscape would draw it) and each PNG checked to have the figure's size and not to be
# blank. No X display is needed (none is set). Exits 77 (skipped) without rsvg-convert.
set -euo pipefail
attnviz=$1 png_check=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
unset DISPLAY WAYLAND_DISPLAY
if ! command -v rsvg-convert >/dev/null; then
    echo "SKIP: rsvg-convert is not installed (librsvg2-bin; ./scripts/test installs it)"; exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }
session="$out/random.json"
"$attnviz" example random --seed 4 -n 8 --d-model 16 --heads 4 --rope half -o "$session"
# The SVG's width and height (rounded up: the PNG at scale 1 has ceil(width) × ceil(height) pixels).
svg_size() { sed -n 's/.*<svg[^>]* width="\([0-9.]*\)" height="\([0-9.]*\)".*/\1 \2/p' "$1" | head -1 |
             awk '{ w = int($1); if (w < $1) w++; h = int($2); if (h < $2) h++; print w, h }'; }
for what in "--matrix weights:2" "--matrix X" "--view heads" "--view pipeline"; do
    name=$(tr -c 'a-zA-Z0-9\n' '_' <<<"$what")
    # shellcheck disable=SC2086
    "$attnviz" export "$session" $what --format svg -o "$out/$name.svg"
    # shellcheck disable=SC2086
    "$attnviz" export "$session" $what --format png -o "$out/$name.png"
    read -r w h < <(svg_size "$out/$name.svg")
    [ -n "${w:-}" ] || fail "$name.svg has no width and height"
    rsvg-convert "$out/$name.svg" -o "$out/$name.rsvg.png" || fail "librsvg cannot render $name.svg"
    "$png_check" "$out/$name.rsvg.png" "$w" "$h" || fail "$name.svg renders blank or at another size"
    "$png_check" "$out/$name.png" "$w" "$h" || fail "$name.png is blank or not the SVG's size"
done
echo "every exported SVG renders, every PNG has its figure's size"
