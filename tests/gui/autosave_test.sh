#!/usr/bin/env bash
# autosave_test.sh ATTNVIZ OUTDIR
# Unsaved work survives kill -9: the real app is started on a session, edited through --set, and
# killed once its autosave is written; `attnviz recover` then gives the edited session back, and
# the next start offers it ("Recover unsaved work" in its draw report). Meanwhile a second running
# instance is never offered the first one's work, and a clean exit leaves no autosave behind.
# Exits 77 (ctest: skipped) only when no X server can be started.
set -euo pipefail
attnviz=$1 out=$2
rm -rf "$out"
mkdir -p "$out"

if ! command -v Xvfb >/dev/null; then
    echo "SKIP: Xvfb is not installed (./scripts/test installs it)"; exit 77
fi
exec 3< <(Xvfb -displayfd 1 -screen 0 1280x800x24 -nolisten tcp 2>/dev/null)
xvfb_pid=$!
app_pid=""
trap 'kill $xvfb_pid 2>/dev/null || true; [ -n "$app_pid" ] && kill -9 $app_pid 2>/dev/null || true' EXIT
display=""
read -r -t 20 display <&3 || true
if [ -z "$display" ]; then
    echo "SKIP: Xvfb could not start an X server"; exit 77
fi
export DISPLAY=":$display" LIBGL_ALWAYS_SOFTWARE=1
export XDG_STATE_HOME="$out/state" XDG_CONFIG_HOME="$out/config"
state="$XDG_STATE_HOME/attnviz"
fail() { echo "FAIL: $*"; exit 1; }
metas() { find "$state" -name '*.meta.json' 2>/dev/null | wc -l; }

session="$out/example.json"
"$attnviz" example worked-example -o "$session"
# X[0][0] of a session file: the first number of the row after "X": [ (one matrix row per line).
x00() { sed -n '/^  "X": \[/{n;p;q}' "$1" | tr -d ' [' | cut -d, -f1; }
[ "$(x00 "$session")" = "1" ] || fail "the worked example's X[0][0] should be 1"

# 1. An instance edits X[0][0] (a typed 2.45) and autosaves it within a fraction of a second.
"$attnviz" "$session" --set X:0:0=2.45 --autosave-seconds 0.2 --size 800x600 &
app_pid=$!
for _ in $(seq 1 600); do [ "$(metas)" -ge 1 ] && break; sleep 0.1; done
[ "$(metas)" -eq 1 ] || fail "no autosave was written within 60 s"

# 2. A second instance while the first runs: nothing to recover, and the first's file is untouched.
"$attnviz" --frames 3 --report "$out/second.json" --autosave-seconds 0.2
grep -q '"Recover unsaved work"' "$out/second.json" && fail "a running instance's autosave was offered"
"$attnviz" recover | grep -q . && fail "recover listed the work of an instance that is still running"

# 3. kill -9: nothing of the app's own runs, its autosave stays.
kill -9 $app_pid
wait $app_pid 2>/dev/null || true
app_pid=""
[ "$(metas)" -eq 1 ] || fail "the autosave did not survive the kill"
# The unsaved work is private: the folder 0700, the autosave's files 0600.
[ "$(stat -c %a "$state")" = 700 ] || fail "the state folder is $(stat -c %a "$state"), not 700"
for f in "$state"/*.json; do
    [ "$(stat -c %a "$f")" = 600 ] || fail "$f is $(stat -c %a "$f"), not 600"
done
"$attnviz" recover > "$out/list.txt"
grep -q "$session" "$out/list.txt" || { cat "$out/list.txt"; fail "recover does not name the session's file"; }
grep -q "n = 2, d_model = 4, 2 heads" "$out/list.txt" || fail "recover does not say what the work holds"
"$attnviz" recover -o "$out/recovered.json"
[ "$(x00 "$out/recovered.json")" = "2.45" ] || fail "the recovered X[0][0] is not the typed 2.45"

# 4. The next start offers it (and keeps it when the user decides later).
"$attnviz" --frames 3 --report "$out/next.json" --autosave-seconds 0.2
grep -q '"Recover unsaved work"' "$out/next.json" || fail "the next start did not offer the unsaved work"
grep -q '"recovery: restore 0"' "$out/next.json" || fail "the offer has no Restore button"
[ "$(metas)" -eq 1 ] || fail "deciding later should keep the autosave"

# 5. A clean exit after edits leaves no autosave of its own.
"$attnviz" "$session" --set X:0:1=7 --autosave-seconds 0.05 --frames 40
[ "$(metas)" -eq 1 ] || fail "a clean exit left its autosave behind"
"$attnviz" recover -o "$out/again.json" --discard
[ "$(metas)" -eq 0 ] || fail "recover --discard did not remove the autosave"
# 6. An instance killed before it autosaved anything leaves only its lock; recover --discard removes
# it (once it is older than a minute: a newer one may be a starting instance's).
"$attnviz" "$session" --autosave-seconds 0.2 --size 800x600 &
app_pid=$!
locks() { find "$state" -name '*.lock' 2>/dev/null; }
for _ in $(seq 1 600); do [ -n "$(locks)" ] && break; sleep 0.1; done
kill -9 $app_pid
wait $app_pid 2>/dev/null || true
app_pid=""
[ -n "$(locks)" ] || fail "the killed instance left no lock to test with"
touch -d '-2 minutes' $(locks)
"$attnviz" recover --discard
[ -z "$(locks)" ] || fail "recover --discard left lock files behind: $(locks)"
echo "autosave survived kill -9 and was recovered: X[0][0] = 2.45"
