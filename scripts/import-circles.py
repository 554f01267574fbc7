#!/usr/bin/env python3
"""Fails if the files of a Rust source folder import each other in a circle.

    scripts/import-circles.py [--list] DIR...      (e.g. fibra/src/runtime)

A module is a file (`x.rs`, or a folder's `x/mod.rs`). An import is any path
that starts with `crate::`, `super::` or `self::` in code (a `use` item, or a
path written inline), resolved to the file module it names; what is inside a
comment, a doc comment, a string, or an item under `#[cfg(test)]` is not an
import. Imports are compared level by level: within each folder under DIR,
its files and its subfolders are the nodes, and an import from anywhere in
one node to anywhere in another is an edge between the two (so a subfolder
counts as one module at its parent's level). A file's use of the folder
that holds it (its `mod.rs`, or an ancestor's), and a folder's `mod.rs` use
of its own files, are not edges: that is how Rust lays out one module across
files. Prints each circle found (its members, and one import per edge, as
`file -> target`), and exits 1 if there is one; prints "no circle" and exits
0 otherwise. With --list, it first prints each file's imports (the modules
they name, crate paths; those outside DIR in brackets).
"""
import os
import re
import sys


def strip(src):
    """The source with comments, strings and char literals blanked out."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            j = src.find('\n', i)
            i = n if j < 0 else j
        elif src.startswith('/*', i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith('/*', i):
                    depth, i = depth + 1, i + 2
                elif src.startswith('*/', i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            out.append(' ')
        elif re.match(r'b?r#*"', src[i:i + 8]) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == '_')):
            m = re.match(r'b?r(#*)"', src[i:])
            end = src.find('"' + m.group(1), i + m.end())
            i = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""')
        elif c == '"':
            i += 1
            while i < n and src[i] != '"':
                i += 2 if src[i] == '\\' else 1
            i += 1
            out.append('""')
        elif c == "'":
            # A char literal ('a', '\n', '\u{..}'), else a lifetime or label.
            m = re.match(r"'(\\(u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'])'", src[i:])
            if m:
                i += m.end()
                out.append("' '")
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def block_end(src, i):
    """The index after the item that starts at `i`: its `;`, or the `}` that
    closes its first brace (whichever comes first at depth 0)."""
    depth = 0
    while i < len(src):
        c = src[i]
        if c in '([{':
            depth += 1
        elif c in ')]}':
            depth -= 1
            if depth == 0 and c == '}':
                return i + 1
        elif c == ';' and depth == 0:
            return i + 1
        i += 1
    return i


TEST_CFG = re.compile(r'#\[cfg\((test|all\(\s*test\b[^\]]*)\)\]')


def drop_tests(src):
    """The source without items under `#[cfg(test)]` (or `cfg(all(test, ..))`),
    and the names of file modules declared that way (`#[cfg(test)] mod x;`)."""
    test_mods = []
    while True:
        m = TEST_CFG.search(src)
        if not m:
            return src, test_mods
        j = m.end()
        # Further attributes of the same item.
        while True:
            a = re.match(r'\s*#\[', src[j:])
            if not a:
                break
            j = block_end(src, j + a.end() - 1)
        decl = re.match(r'\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', src[j:])
        if decl:
            test_mods.append(decl.group(1))
        src = src[:m.start()] + ' ' + src[block_end(src, j):]


def use_paths(tree, prefix=''):
    """The paths of a `use` tree: `a::{b, c::{self, d}}` -> a::b, a::c, a::c::d."""
    tree = tree.strip()
    m = re.match(r'^((?:[\w$]+\s*::\s*)*)\{(.*)\}$', tree, re.S)
    if not m:
        path = re.split(r'\s+as\s+', tree)[0].replace(' ', '')
        path = (prefix + path).replace('::self', '')
        return [path.rstrip(':')] if path else []
    head = prefix + m.group(1).replace(' ', '')
    parts, depth, cur = [], 0, ''
    for ch in m.group(2):
        if ch == ',' and depth == 0:
            parts.append(cur)
            cur = ''
            continue
        depth += ch == '{'
        depth -= ch == '}'
        cur += ch
    parts.append(cur)
    paths = []
    for part in parts:
        if part.strip():
            paths += use_paths(part, head)
    return paths


def crate_root(folder):
    """The crate's source root above `folder` (where lib.rs or main.rs is),
    and the module path of `folder` in it."""
    d = os.path.abspath(folder)
    while True:
        if any(os.path.exists(os.path.join(d, f)) for f in ('lib.rs', 'main.rs')):
            rel = os.path.relpath(os.path.abspath(folder), d)
            return d, [] if rel == '.' else rel.split(os.sep)
        parent = os.path.dirname(d)
        if parent == d:
            sys.exit(f'{folder}: no lib.rs or main.rs above it')
        d = parent


def modules(root):
    """Every file module of the crate: module path (a tuple) -> file."""
    mods = {}
    for d, _, files in os.walk(root):
        for f in files:
            if not f.endswith('.rs'):
                continue
            p = os.path.join(d, f)
            parts = os.path.relpath(p, root)[:-3].split(os.sep)
            if parts[-1] == 'mod' or (len(parts) == 1 and parts[0] in ('lib', 'main')):
                parts = parts[:-1]
            mods.setdefault(tuple(parts), p)
    return mods


def resolve(mods, cur, path):
    segs = path.replace('$crate', 'crate').split('::')
    if segs[0] == 'crate':
        base, segs = [], segs[1:]
    elif segs[0] in ('super', 'self'):
        base = list(cur)
        while segs and segs[0] in ('super', 'self'):
            if segs[0] == 'super':
                base = base[:-1]
            segs = segs[1:]
    elif tuple(cur) + (segs[0],) in mods:
        base = list(cur)  # a path into one of the file's own child modules
    else:
        return None
    for i in range(len(segs), -1, -1):
        m = tuple(base + segs[:i])
        if m in mods:
            return m
    return None


INLINE = re.compile(r'(?<![\w$:])\$?(?:crate|super|self|[a-z_]\w*)(?:\s*::\s*(?:super|self|[A-Za-z_]\w*))+')
USE = re.compile(r'\buse\s+([^;]*);')


def check(folder, listing=False):
    root, top = crate_root(folder)
    top = tuple(top)
    mods = modules(root)
    files = {m: p for m, p in mods.items() if m[:len(top)] == top}
    tested = set()
    imports = {}
    for m, p in sorted(files.items()):
        src, test_mods = drop_tests(strip(open(p, encoding='utf-8').read()))
        tested |= {m + (t,) for t in test_mods}
        paths = []
        for u in USE.finditer(src):
            paths += use_paths(u.group(1))
        paths += [x.group(0).replace(' ', '') for x in INLINE.finditer(src)]
        imports[m] = {t for t in (resolve(mods, m, x) for x in paths) if t is not None}
    if listing:
        for m in sorted(imports):
            inside = sorted('::'.join(t[len(top):]) for t in imports[m]
                            if t[:len(top)] == top and len(t) > len(top) and m[:len(t)] != t)
            outside = sorted('::'.join(t) or 'crate' for t in imports[m] if t[:len(top)] != top)
            name = os.path.relpath(files[m], folder)
            print(f'{name}: {" ".join(inside) or "-"}' + (f' [{" ".join(outside)}]' if outside else ''))
    edges = {}  # (level, from, to) -> an example (file, target)
    for m, targets in imports.items():
        if any(m[:len(t)] == t for t in tested):
            continue
        for t in targets:
            k = 0
            while k < min(len(m), len(t)) and m[k] == t[k]:
                k += 1
            if k == len(m) or k == len(t) or k < len(top):
                continue  # a parent's use of its child, a child's of an ancestor, or outside
            level = m[:k]
            edges.setdefault((level, m[k], t[k]), (files[m], '::'.join(t)))
    circles = []
    for level in sorted({e[0] for e in edges}):
        graph = {}
        for (lv, a, b) in edges:
            if lv == level:
                graph.setdefault(a, set()).add(b)
                graph.setdefault(b, set())
        for scc in strongly_connected(graph):
            if len(scc) > 1:
                circles.append((level, scc, graph))
    for level, scc, graph in circles:
        where = '/'.join(level) or '(crate root)'
        print(f'{folder}: {len(scc)} modules of {where} in a circle: {" ".join(sorted(scc))}')
        for a in sorted(scc):
            for b in sorted(graph[a] & set(scc)):
                file, target = edges[(level, a, b)]
                print(f'  {a} -> {b}: {os.path.relpath(file)} uses {target}')
    if not circles:
        print(f'{folder}: no circle')
    return not circles


def strongly_connected(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            out.append(scc)

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


if __name__ == '__main__':
    args = sys.argv[1:]
    listing = '--list' in args
    folders = [a for a in args if a != '--list']
    if not folders:
        sys.exit(__doc__)
    ok = all([check(folder, listing) for folder in folders])
    sys.exit(0 if ok else 1)
