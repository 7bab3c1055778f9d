#!/usr/bin/env python3
"""The interactive page (attnviz export --format html) opened in headless Firefox, as check_page.py
opens it in Chromium: it draws (a screenshot that is not blank, and unlike the same page with
JavaScript off), reads its state from the address (#select= changes what is drawn, #view=model
shows the model view) and logs nothing to its console.

    check_page_firefox.py ATTNVIZ WORKDIR

Exits 77 (skipped) with a message when no Firefox is installed.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_page import check, drawn, pixels  # noqa: E402

PREFS = """user_pref("devtools.console.stdout.content", true);
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
"""


def firefox():
    for name in ("firefox-esr", "firefox"):
        path = shutil.which(name)
        if path:
            return path
    return None


def profile(workdir, name, javascript):
    path = os.path.join(workdir, name)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "user.js"), "w") as f:
        f.write(PREFS + ('user_pref("javascript.enabled", false);\n' if not javascript else ""))
    return path


def shot(browser, prof, url, out):
    """A screenshot of `url` at `out`, and the page's console lines."""
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([browser, "--headless", "--no-remote", "--profile", prof, "--window-size", "1280,900",
                        "--screenshot", out, url], capture_output=True, text=True, timeout=180)
    check(p.returncode == 0 and os.path.exists(out),
          "firefox exited %d on %s:\n%s" % (p.returncode, url, (p.stdout + p.stderr)[-2000:]))
    return [line for line in p.stdout.splitlines() if line.startswith("console.")]


def main():
    attnviz, workdir = sys.argv[1], sys.argv[2]
    browser = firefox()
    if not browser:
        print("SKIP: Firefox is not installed (./scripts/test installs firefox-esr)")
        sys.exit(77)
    os.makedirs(workdir, exist_ok=True)
    session = os.path.join(workdir, "session.json")
    page = os.path.join(workdir, "page.html")
    subprocess.run([attnviz, "example", "sentence", "--text", "the cat sat on the warm mat", "--heads", "2",
                    "-o", session], check=True)
    subprocess.run([attnviz, "export", session, "--view", "head", "--format", "html", "-o", page], check=True)
    url = "file://" + os.path.abspath(page)
    with_js, without_js = profile(workdir, "profile", True), profile(workdir, "profile-nojs", False)
    shots = {}
    for name, prof, fragment in (("select0", with_js, "#select=0"), ("select4", with_js, "#select=4"),
                                 ("model", with_js, "#view=model"), ("nojs", without_js, "#select=0")):
        out = os.path.join(workdir, name + ".png")
        console = shot(browser, prof, url + fragment, out)
        check(not console, "%s: the page logged to its console:\n%s" % (name, "\n".join(console)))
        shots[name] = out
    colours, share = drawn(shots["select0"])
    print("head view in Firefox: %d colours, %.1f%% not background" % (colours, share * 100))
    check(colours > 20 and share > 0.02, "the head view in Firefox looks blank")
    rows = {name: pixels(path)[0] for name, path in shots.items()}
    check(rows["select0"] != rows["nojs"], "the page draws the same with JavaScript off: its script did not run")
    check(rows["select0"] != rows["select4"], "#select=4 draws the same as #select=0: the address is not read")
    check(rows["model"] != rows["select0"], "#view=model draws the same as the head view")
    print("Firefox: drawn by its script, #select= and #view= read from the address, no console message")


if __name__ == "__main__":
    main()
