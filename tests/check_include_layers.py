#!/usr/bin/env python3
"""Checks that the include graph of core/ and app/ is layered (ctest include_layers).

Every file of core/ and app/ belongs to one layer (the rules' "layers", first matching path wins); a
layer may include only the layers "allowed" lists for it (and itself). The rules are data, in
tests/include_layers.json. Reported, each as file:line:
  - an #include of a layer not allowed (a lower layer including a higher one, a sibling, core
    including app);
  - an #include in core/ of ImGui, OpenGL or GLFW (FORBIDDEN_IN_CORE);
  - a cycle between layers (also checked on its own, so that a rules table that allowed one would
    not hide it);
  - a cycle between the files of one layer of "files_acyclic", a .cpp and its .hpp counted as one
    unit (registry.cpp including params.hpp while params.cpp includes registry.hpp is one).
Usage: check_include_layers.py [REPOSITORY_ROOT]   (default: the parent of this script's folder)
Exit 0 when layered, 1 with the problems listed otherwise.
"""
import json
import os
import re
import sys

# The rules are data: tests/include_layers.json (layers, allowed, files_acyclic); "core/*" in a list
# of allowed layers stands for every layer of core/.
RULES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include_layers.json")


def load_rules(path=RULES):
    with open(path, encoding="utf-8") as f:
        rules = json.load(f)
    layers = [tuple(pair) for pair in rules["layers"]]
    core = [layer for _, layer in layers if layer.startswith("core/")]
    allowed = {layer: [x for name in names for x in (core if name == "core/*" else [name])]
               for layer, names in rules["allowed"].items()}
    return layers, allowed, rules["files_acyclic"]


LAYERS, ALLOWED, FILES_ACYCLIC = load_rules()

# Headers core/ never includes, quoted or angled: the window and the GPU belong to app/.
FORBIDDEN_IN_CORE = re.compile(r"^(imgui|implot|GL/|GLFW/|glad|backends/imgui)")

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SOURCES = (".cpp", ".hpp", ".c", ".h")


def layer_of(path):
    for prefix, layer in LAYERS:
        if path.startswith(prefix):
            return layer
    return None


def resolve(root, including, name):
    """The repository path a quoted include names, searched as the compiler does (the including
    file's folder, then the include directories: the root, and app/gui for app/), or None."""
    candidates = [os.path.join(os.path.dirname(including), name), name]
    if including.startswith("app/"):
        candidates.append(os.path.join("app/gui", name))
    for c in candidates:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(root, c)):
            return c
    return None


def find_cycle(edges):
    """A cycle of the layer graph {layer: {layer: (file, line)}} as a list of layers, or None."""
    state = {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(edges.get(node, {})):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, stack)
                if found:
                    return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node, [])
            if found:
                return found
    return None


def check(root):
    problems = []
    edges = {}  # layer → {included layer: (file, line)} (the first include that makes the edge)
    units = {}  # within a layer: unit (path without extension) → {included unit: (file, line)}
    for top in ("core", "app"):
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.relpath(os.path.join(folder, name), root)
                layer = layer_of(path)
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    lines = f.read().split("\n")
                for number, text in enumerate(lines, 1):
                    m = INCLUDE.match(text)
                    if not m:
                        continue
                    where = "%s:%d" % (path, number)
                    target = m.group(2)
                    if layer.startswith("core/") and FORBIDDEN_IN_CORE.match(target):
                        problems.append("%s: core includes %s (the window and GL belong to app/)" % (where, target))
                        continue
                    if m.group(1) != '"':
                        continue
                    resolved = resolve(root, path, target)
                    if resolved is None:
                        continue  # a system or third-party header
                    target_layer = layer_of(resolved)
                    if target_layer == layer and layer in FILES_ACYCLIC:
                        unit, target_unit = os.path.splitext(path)[0], os.path.splitext(resolved)[0]
                        if unit != target_unit:
                            units.setdefault(unit, {}).setdefault(target_unit, (where, resolved))
                    if target_layer is None or target_layer == layer:
                        continue
                    edges.setdefault(layer, {}).setdefault(target_layer, (where, resolved))
                    if target_layer not in ALLOWED[layer]:
                        problems.append("%s: %s (%s) includes %s (%s), which it may not: %s may include only %s"
                                        % (where, path, layer, resolved, target_layer, layer,
                                           ", ".join(ALLOWED[layer]) or "itself"))
    cycle = find_cycle(edges)
    if cycle:
        steps = ["%s → %s (%s includes %s)" % (a, b, edges[a][b][0], edges[a][b][1]) for a, b in zip(cycle, cycle[1:])]
        problems.append("a cycle between layers: " + "; ".join(steps))
    unit_cycle = find_cycle(units)
    if unit_cycle:
        steps = ["%s → %s (%s includes %s)" % (a, b, units[a][b][0], units[a][b][1])
                 for a, b in zip(unit_cycle, unit_cycle[1:])]
        problems.append("a cycle between files of one layer: " + "; ".join(steps))
    rules = {layer: {other: None for other in allowed} for layer, allowed in ALLOWED.items()}
    rules_cycle = find_cycle(rules)
    if rules_cycle:
        problems.append("the rules table allows a cycle: " + " → ".join(rules_cycle))
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print("%d include(s) against the layers (see tests/check_include_layers.py)" % len(problems))
        return 1
    print("include layers: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
