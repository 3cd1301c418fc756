#!/usr/bin/env python3
"""Lists file-level import circles inside each crate of the workspace; exits 1 when there is one.

A file depends on another when it names an item of the other's module: `use crate::a::b::X`,
`use super::X`, `self::m::Y`, a path written inline (`crate::bind::Slot::new()`), or a
re-export (`pub use child::X`). A path inside an inline module (`mod tests { use super::*; }`) is
read from that module, as the compiler reads it. Declaring a submodule (`mod child;`) is not a dependency: a parent
may hold its children without the two depending on each other. A circle is a strongly connected
set of two or more files; each crate's documentation states the direction its files import in,
and this check is what keeps it true.

    python3 scripts/check_layers.py            # every crate: vm, compiler, filtervm, cli
    python3 scripts/check_layers.py vm/src     # one crate's source folder
    python3 scripts/check_layers.py --graph vm/src   # also print each file's dependencies
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRATES = ["vm/src", "compiler/src", "filtervm/src", "cli/src"]


def strip_comments_and_strings(text: str) -> str:
    """The source without comments, string and char literals (so paths inside them do not count)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 8]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            i = n if j < 0 else j + len(end)
            out.append('""')
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            out.append('""')
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or (c == "'" and re.match(r"'\\u\{[0-9a-fA-F]+\}'", text[i:i + 12])):
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            i += m.end()
            out.append("' '")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def module_files(src: Path) -> dict[tuple[str, ...], Path]:
    """Module path -> file, for every .rs file under a crate's src folder."""
    modules = {}
    for f in src.rglob("*.rs"):
        rel = f.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        if parts in (["lib"], ["main"]):
            parts = []
        elif parts[-1] == "mod":
            parts = parts[:-1]
        if parts and parts[0] == "bin":
            continue
        modules[tuple(parts)] = f
    return modules


def own_module(src: Path, f: Path) -> tuple[str, ...]:
    rel = f.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts in (["lib"], ["main"]):
        return ()
    if parts[-1] == "mod":
        return tuple(parts[:-1])
    return tuple(parts)


def expand_use_tree(tree: str) -> list[str]:
    """`a::{b, c::{d, e}}` -> [`a::b`, `a::c::d`, `a::c::e`]."""
    tree = re.sub(r"\s+", "", tree)

    def split_top(s: str) -> list[str]:
        items, depth, cur = [], 0, ""
        for ch in s:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                items.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            items.append(cur)
        return items

    def expand(s: str) -> list[str]:
        b = s.find("{")
        if b < 0:
            return [s]
        prefix, inner = s[:b], s[b + 1:s.rfind("}")]
        out = []
        for item in split_top(inner):
            for tail in expand(item):
                out.append(prefix + tail if tail != "self" else prefix.rstrip(":"))
        return out

    return expand(tree)


PATH_RE = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE_RE = re.compile(r"(?<![A-Za-z0-9_])use\s+([A-Za-z_][^;]*);", re.S)
MOD_RE = re.compile(r"\b(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;")


def resolve(path: list[str], here: tuple[str, ...], modules) -> tuple[str, ...] | None:
    """The module (a file's) that the path's item lives in: the longest prefix that is a module."""
    head, rest = path[0], path[1:]
    if head == "crate":
        base: tuple[str, ...] = ()
    elif head == "self":
        base = here
    else:
        base = here
        while rest or head == "super":
            if head != "super":
                break
            base = base[:-1]
            if rest and rest[0] == "super":
                head, rest = rest[0], rest[1:]
            else:
                break
    best = base if base in modules else None
    cur = base
    for seg in rest:
        if seg == "super":
            cur = cur[:-1]
            continue
        cur = cur + (seg,)
        if cur in modules:
            best = cur
        else:
            break
    return best


PUB_USE_RE = re.compile(r"\bpub(?:\([^)]*\))?\s+use\s+([A-Za-z_][^;]*);", re.S)


def absolute(segs: list[str], here: tuple[str, ...], children) -> list[str]:
    """A path written in module `here`, made to start at `crate`."""
    if segs and here + (segs[0],) in children:
        segs = ["self"] + segs
    if not segs:
        return segs
    if segs[0] == "crate":
        return segs
    if segs[0] == "self":
        return ["crate", *here, *segs[1:]]
    if segs[0] == "super":
        base = list(here)
        while segs and segs[0] == "super":
            base, segs = base[:-1], segs[1:]
        return ["crate", *base, *segs]
    return []


INLINE_MOD_RE = re.compile(r"\b(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{")


def inline_modules(text: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of every inline `mod name { ... }` block (a `mod tests` among them)."""
    blocks = []
    for m in INLINE_MOD_RE.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
            i += 1
        blocks.append((m.start(), i, m.group(1)))
    return blocks


def enclosing(blocks: list[tuple[int, int, str]], pos: int) -> tuple[str, ...]:
    """The inline modules around a position, outermost first: a path written there is read from
    that module (`super::*` in a file's `mod tests` names the file's own module, not its parent)."""
    return tuple(name for start, end, name in sorted(blocks) if start < pos < end)


def dependencies(src: Path):
    modules = module_files(src)
    texts, children_of = {}, {}
    for module, f in modules.items():
        texts[module] = strip_comments_and_strings(f.read_text(encoding="utf-8"))
        children_of[module] = {module + (m,) for m in MOD_RE.findall(texts[module])}
    # Re-exports: (module, name) -> the absolute path it names, so that `crate::Name` reaches the
    # file that defines `Name`, not the crate root that re-exports it.
    reexports: dict[tuple[tuple[str, ...], str], list[str]] = {}
    for module, text in texts.items():
        for m in PUB_USE_RE.finditer(text):
            for p in expand_use_tree(m.group(1)):
                name_part = p.split(" as ")
                segs = [x for x in name_part[0].split("::") if x]
                alias = name_part[1] if len(name_part) > 1 else (segs[-1] if segs else "")
                full = absolute(segs, module, children_of[module])
                if full and alias and alias != "*":
                    reexports[(module, alias)] = full

    def target_of(full: list[str], depth: int = 0):
        cur: tuple[str, ...] = ()
        best = ()
        rest = full[1:]
        for i, seg in enumerate(rest):
            if cur + (seg,) in modules:
                cur = cur + (seg,)
                best = cur
                continue
            via = reexports.get((cur, seg))
            if via is not None and depth < 16 and via != full:
                return target_of(via + rest[i + 1:], depth + 1)
            break
        return best

    graph: dict[Path, set[Path]] = {f: set() for f in modules.values()}
    for module, f in modules.items():
        text = texts[module]
        blocks = inline_modules(text)
        paths = []
        for m in USE_RE.finditer(text):
            here = module + enclosing(blocks, m.start())
            paths.extend((p.split(" as ")[0], here) for p in expand_use_tree(m.group(1)))
        # Same length, so that positions still say which inline module a path is written in.
        text_without_uses = USE_RE.sub(lambda m: " " * (len(m.group(0)) - 1) + ";", text)
        for m in PATH_RE.finditer(text_without_uses):
            paths.append((m.group(1) + m.group(2), module + enclosing(blocks, m.start())))
        for p, here in paths:
            full = absolute([x for x in p.split("::") if x], here, children_of[module])
            if not full:
                continue
            target = target_of(full)
            if target == module:
                continue
            graph[f].add(modules[target])
    return graph


def circles(graph):
    """Strongly connected components of two or more files (Tarjan, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def main(argv: list[str]) -> int:
    show_graph = "--graph" in argv
    folders = [a for a in argv if not a.startswith("--")] or CRATES
    found = False
    for folder in folders:
        src = (ROOT / folder).resolve()
        graph = dependencies(src)
        if show_graph:
            for f in sorted(graph):
                deps = ", ".join(str(d.relative_to(src)) for d in sorted(graph[f]))
                print(f"{f.relative_to(ROOT)} -> {deps or '(nothing)'}")
        for comp in circles(graph):
            found = True
            print(f"{folder}: circle of {len(comp)} files:")
            members = set(comp)
            for f in comp:
                inside = sorted(str(d.relative_to(src)) for d in graph[f] if d in members)
                print(f"  {f.relative_to(src)} -> {', '.join(inside)}")
    if not found:
        print(f"no import circles in {', '.join(folders)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
