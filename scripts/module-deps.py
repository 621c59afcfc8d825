#!/usr/bin/env python3
"""Dependency cycles between the crate's top-level modules (issue 14: the stages must form a
layering, not a knot). Reads src/, finds in each top-level module `a` every path into another
top-level module `x` -- `use crate::x...` (grouped uses included), a `crate::x::` path
anywhere, `super::x` out of the module, and the crate's own name (`apply_patch::x`, which the
command line uses) -- and prints each strongly connected component of more than one module.
Test-only code is left out: `#[cfg(test)]` items and modules, `tests.rs` and `*_tests.rs`.
Comments and string literals are not code and are skipped too.

Usage: scripts/module-deps.py [--edges] [--why A B]
  --edges   also print every edge, with the files that make it
  --why A B print where module A uses module B
Exits 1 when a cycle exists, 0 otherwise. Standard library only.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
CRATE_NAMES = ("crate", "apply_patch")


def strip_code(text):
    """The text with comments, string and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if text[i] == "\n":
                        out.append("\n")
                    i += 1
            continue
        raw = re.match(r'b?r(#*)"', text[i:i + 300])
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + raw.group(1)
            j = text.find(end, i + raw.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
            continue
        if c == "'":
            # A char literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:i + 12])
            if m:
                out.append("' '")
                i += m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


TEST_ATTR = re.compile(r"#\[cfg\((?:all\()?test\b")


def skip_item(code, start):
    """The end of the item beginning at `start` (after its attributes): a brace block, or
    the next `;` when none opens first."""
    i, n = start, len(code)
    while i < n and code[i] not in "{;":
        i += 1
    if i >= n or code[i] == ";":
        return i + 1
    return skip_braces(code, i)


def drop_test_items(code):
    """(code without `#[cfg(test)]` items, names of `#[cfg(test)] mod name;` files)."""
    test_mods = set()
    while True:
        m = TEST_ATTR.search(code)
        if not m:
            return code, test_mods
        # Past this attribute and any others on the same item.
        i = code.find("]", m.end()) + 1
        while True:
            rest = re.match(r"\s*#\[[^\]]*\]", code[i:])
            if not rest:
                break
            i += rest.end()
        decl = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", code[i:])
        if decl:
            test_mods.add(decl.group(1))
        end = skip_item(code, i)
        code = code[:m.start()] + "\n" * code.count("\n", m.start(), end) + code[end:]


def module_path(path):
    """src/a/b.rs -> ['a', 'b']; src/a/mod.rs and src/a.rs -> ['a']."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "mod":
        parts.pop()
    return parts


def targets(code, mod_path):
    """The top-level modules named by paths in `code` of the module at `mod_path`."""
    found = set()
    crate = "|".join(CRATE_NAMES)
    # `use crate::{a, b::c}` and `use crate::a::{..}`: the first segment of each group item.
    for m in re.finditer(r"\buse\s+(?:" + crate + r")::\{", code):
        end = skip_braces(code, m.end() - 1)
        for item in split_top(code[m.end():end - 1]):
            name = re.match(r"\s*(\w+)", item)
            if name:
                found.add(name.group(1))
    for m in re.finditer(r"(?<![\w:])(?:" + crate + r")::(\w+)", code):
        found.add(m.group(1))
    # `super::` chains that climb out of the top-level module.
    for m in re.finditer(r"(?<![\w:])((?:super::)+)(\w+)", code):
        ups = m.group(1).count("super::")
        base = mod_path[:len(mod_path) - ups]
        if not base:
            found.add(m.group(2))
    return found


def skip_braces(code, i):
    depth = 0
    while i < len(code):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(code)


def split_top(text):
    items, depth, cur = [], 0, []
    for c in text:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if c == "," and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    items.append("".join(cur))
    return items


def root_aliases(modules):
    """Names at the crate root that stand for a module: `pub use m::{A, B}` re-exports and
    inline `pub mod name { pub use crate::m::... }` facades."""
    code, _ = drop_test_items(strip_code((SRC / "lib.rs").read_text()))
    aliases = {}
    for m in re.finditer(r"\bpub\s+mod\s+(\w+)\s*\{", code):
        end = skip_braces(code, m.end() - 1)
        inner = targets(code[m.end():end], [m.group(1)]) & modules
        if len(inner) == 1:
            aliases[m.group(1)] = inner.pop()
    for m in re.finditer(r"\bpub\s+use\s+(\w+)::(\{[^}]*\}|\w+)", code):
        if m.group(1) in modules:
            for name in re.findall(r"\w+", m.group(2)):
                aliases.setdefault(name, m.group(1))
    return aliases


def collect():
    """{(a, x): [files]} for every edge between two top-level modules."""
    files = sorted(p for p in SRC.rglob("*.rs") if p.name not in ("lib.rs", "main.rs"))
    modules = {module_path(p)[0] for p in files}
    aliases = root_aliases(modules)
    parsed, test_files = {}, set()
    for path in files:
        code, test_mods = drop_test_items(strip_code(path.read_text()))
        parsed[path] = code
        # A child module's file: beside mod.rs, or in the folder named after the file.
        base = path.parent if path.name == "mod.rs" else path.with_suffix("")
        for name in test_mods:
            test_files.update({base / f"{name}.rs", base / name / "mod.rs"})
    edges = {}
    for path, code in parsed.items():
        if path.name == "tests.rs" or path.name.endswith("_tests.rs") or path in test_files:
            continue
        mod_path = module_path(path)
        for name in targets(code, mod_path):
            target = name if name in modules else aliases.get(name)
            if target and target != mod_path[0]:
                edges.setdefault((mod_path[0], target), []).append(
                    str(path.relative_to(ROOT)))
    return modules, edges


def components(modules, edges):
    """Tarjan's strongly connected components."""
    graph = {m: sorted({b for (a, b) in edges if a == m}) for m in modules}
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for m in sorted(modules):
        if m not in index:
            visit(m)
    return sorted(c for c in out if len(c) > 1)


def main(argv):
    modules, edges = collect()
    if "--why" in argv:
        i = argv.index("--why")
        a, b = argv[i + 1], argv[i + 2]
        for f in sorted(set(edges.get((a, b), []))):
            print(f)
        return 0
    if "--edges" in argv:
        for (a, b), files in sorted(edges.items()):
            print(f"{a} -> {b}  ({', '.join(sorted(set(files)))})")
    cycles = components(modules, edges)
    for comp in cycles:
        print("cycle: {" + ", ".join(comp) + "}")
    if cycles:
        print(f"{len(cycles)} dependency cycle(s) between top-level modules of src/; "
              "scripts/module-deps.py --why A B shows where A uses B", file=sys.stderr)
        return 1
    print(f"no dependency cycle between the {len(modules)} top-level modules of src/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
