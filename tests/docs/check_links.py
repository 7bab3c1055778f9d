#!/usr/bin/env python3
"""Checks the links of README.md and docs/ (ctest docs_links).

Reads README.md and every docs/**/*.md, finds each markdown link and image, `[text](target)` and
`![alt](target)` (and reference definitions, `[name]: target`), outside code blocks and code spans,
and reports, each as file:line:
  - a target that is no file or folder of the repository (resolved relative to the file; a target
    starting with / relative to the repository root); http(s) and mailto URLs are not followed;
  - an #anchor into a .md file (or into the file itself) that names no heading of it, headings
    taken as GitHub makes their anchors (lowercase, spaces to '-', punctuation but '-' and '_'
    dropped, letters and digits of any script kept; a repeated heading gets -1, -2, …), and
    <a id="…"> / <a name="…"> anchors too;
  - README.md at 300 lines or more;
  - a docs/**/*.md page that cannot be reached from README.md by following links between pages
    (a link to a folder reaches its README.md).
Usage: check_links.py [REPOSITORY_ROOT]   (default: the grandparent of this script's folder)
Exit 0 with a one-line summary when all is well, 1 with the problems listed otherwise.
"""
import os
import re
import sys
from urllib.parse import unquote

README_MAX_LINES = 300

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# [text](target "title") and ![alt](target): text may hold one level of brackets and span lines.
INLINE_LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.MULTILINE)
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+[^>]*\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
EXTERNAL = re.compile(r"^(https?:|mailto:)", re.IGNORECASE)


def blank_fences(text):
    """The text with fenced code blocks replaced by empty lines (line numbers kept)."""
    out = []
    fence = None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)[0] * len(m.group(1))
            out.append("")
        elif fence is not None:
            if m and m.group(1).startswith(fence) and line.strip() == m.group(1):
                fence = None
            out.append("")
        else:
            out.append(line)
    return "\n".join(out)


def blank_code(text):
    """The text with fenced code blocks and code spans replaced by spaces (newlines kept), so that
    nothing in code is taken for a link or a heading and line numbers stay right."""

    def spaces(m):
        return re.sub(r"[^\n]", " ", m.group(0))

    # A code span: a run of backticks, then anything up to the same run (it may span lines).
    return re.sub(r"(`+)(?:(?!\1).|\n)+?\1", spaces, blank_fences(text))


def slug(heading):
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    out = []
    for ch in text.strip().lower():
        if ch.isalnum() or ch in "-_":
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)


def headings_source(text):
    """The text with code blocks blanked but code spans kept: headings such as "## `compute`"
    take their anchor from the code's text."""
    return blank_fences(text)


def page_anchors(text):
    found = set()
    seen = {}
    for line in headings_source(text).split("\n"):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        found.add(base if base not in seen else f"{base}-{seen[base]}")
        seen[base] = seen.get(base, 0) + 1
    for m in HTML_ANCHOR.finditer(text):
        found.add(m.group(1))
    return found


def links_of(text):
    """(line, target) of every link and image outside code."""
    plain = blank_code(text)
    result = []
    for m in INLINE_LINK.finditer(plain):
        target = m.group(2)
        line = plain.count("\n", 0, m.start(2)) + 1
        result.append((line, target))
    for m in REFERENCE_DEF.finditer(plain):
        line = plain.count("\n", 0, m.start(1)) + 1
        result.append((line, m.group(1)))
    return result


def markdown_pages(root):
    pages = []
    if os.path.isfile(os.path.join(root, "README.md")):
        pages.append("README.md")
    for folder, dirs, names in os.walk(os.path.join(root, "docs")):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(".md"):
                pages.append(os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/"))
    return pages


def check(root):
    problems = []
    pages = markdown_pages(root)
    texts = {}
    for page in pages:
        with open(os.path.join(root, page), encoding="utf-8") as f:
            texts[page] = f.read()
    anchor_cache = {}

    def anchors(path):
        if path not in anchor_cache:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                anchor_cache[path] = page_anchors(f.read())
        return anchor_cache[path]

    edges = {page: set() for page in pages}
    count = 0
    for page in pages:
        folder = os.path.dirname(page)
        for line, target in links_of(texts[page]):
            if not target or EXTERNAL.match(target):
                continue
            count += 1
            path_part, _, anchor = target.partition("#")
            path_part = unquote(path_part.split("?", 1)[0])
            if path_part == "":
                resolved = page
            elif path_part.startswith("/"):
                resolved = os.path.normpath(path_part.lstrip("/"))
            else:
                resolved = os.path.normpath(os.path.join(folder, path_part))
            resolved = resolved.replace(os.sep, "/")
            full = os.path.join(root, resolved)
            if resolved.startswith("../") or not os.path.exists(full):
                problems.append(f"{page}:{line}: broken link: {target} (no {resolved})")
                continue
            if os.path.isdir(full):
                index = os.path.join(resolved, "README.md").replace(os.sep, "/")
                if index in edges:
                    edges[page].add(index)
                if anchor:
                    problems.append(f"{page}:{line}: an anchor into a folder: {target}")
                continue
            if resolved.endswith(".md"):
                if resolved in edges:
                    edges[page].add(resolved)
                if anchor and unquote(anchor) not in anchors(resolved):
                    problems.append(f"{page}:{line}: broken anchor: {target} (no heading #{anchor} in {resolved})")

    if "README.md" not in texts:
        problems.append("README.md: missing")
    else:
        lines = len(texts["README.md"].splitlines())
        if lines >= README_MAX_LINES:
            problems.append(f"README.md:{lines}: README.md has {lines} lines, at most {README_MAX_LINES - 1} allowed")
        reached = {"README.md"}
        todo = ["README.md"]
        while todo:
            for nxt in sorted(edges[todo.pop()]):
                if nxt not in reached:
                    reached.add(nxt)
                    todo.append(nxt)
        for page in pages:
            if page not in reached:
                problems.append(f"{page}:1: not reachable from README.md (no chain of links leads to it)")
    return problems, count, len(pages), len(texts.get("README.md", "").splitlines())


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    problems, links, pages, readme_lines = check(root)
    if problems:
        for p in problems:
            print(p)
        print(f"check_links: {len(problems)} problem(s) in {pages} pages")
        return 1
    print(f"check_links: {links} links in {pages} pages resolve; README.md has {readme_lines} lines; "
          f"every page is reachable from README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
