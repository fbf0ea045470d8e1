#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Dependencies between source files run one way.

For each layer (kernel/*.c, lib/*.c, bench/*.c) this builds the graph of
calls between files: file A calls file B when A has a call `name(` of a
function that B defines without `static`.  A cycle between files means
neither can be understood, tested or changed below the other, so every
cycle fails the check unless each of its back-edges is named, with the
reason it is still there, in tests/host/layering.allow.  An allowed edge
that no longer closes a cycle fails too: the list only shrinks.

It also checks doc/architecture.md's tables of the kernel's and the
library's files: a row for every file, its last column naming exactly the
files the graph has it call, and every one of those in an earlier row
(allowed back-edges aside), so that "a file calls only what is above it"
stays true.

    tests/host/layering.py [-q] [--top DIR]

Prints each layer's files, lowest first, with the files each calls, then
the cycles and what else is wrong; exit status 1 if anything is.  The
tokenizer is deliberately simple: it knows comments, strings, character
constants, braces and preprocessor lines; a function reached only through
a pointer (an ops table, a callback) is no edge, which is what a callback
registered from above is for.
"""
import argparse
import os
import re
import sys

LAYERS = ("kernel", "lib", "bench")
ALLOW = "tests/host/layering.allow"
DOC = "doc/architecture.md"
DOC_LAYERS = ("kernel", "lib")

TOKEN = re.compile(r"""
    (?P<comment>/\*.*?\*/|//[^\n]*)
  | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<pp>^[ \t]*\#(?:\\\n|[^\n])*)
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<punct>->|[{}()\[\];,.=])
  | (?P<other>\S)
""", re.S | re.M | re.X)

# Identifiers that take parentheses before or after a definition's name
# without being it: attributes and sparse's lock annotations.
NOT_A_NAME = re.compile(r"__\w*|[A-Z_]+_ATTR\w*")


def tokens(text):
    """(kind, value) pairs; a preprocessor line is one 'pp' token."""
    for m in TOKEN.finditer(text):
        kind = m.lastgroup
        if kind in ("comment", "other"):
            continue
        yield kind, m.group()


def pp_calls(line):
    """Calls in a #define's body (a macro used in its own file)."""
    m = re.match(r"\s*#\s*define\s+\w+(\([^)]*\))?", line)
    if not m:
        return []
    body = re.sub(r"/\*.*?\*/|\"(?:\\.|[^\"\\])*\"", " ", line[m.end():])
    return re.findall(r"(?<![\w.>])([A-Za-z_]\w*)\s*\(", body)


def scan(path):
    """(non-static functions defined, names called) of one C file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        toks = list(tokens(f.read()))
    defined, called = set(), set()
    depth = 0
    stmt = []		# tokens of the current top-level declaration
    for i, (kind, val) in enumerate(toks):
        if kind == "pp":
            called.update(pp_calls(val))
            continue
        if depth == 0:
            if val == "{":
                name = definition_name(stmt)
                if name and "static" not in (v for _, v in stmt):
                    defined.add(name)
                depth = 1
                stmt = []
            elif val in (";", "}"):
                stmt = []
            else:
                stmt.append((kind, val))
            continue
        if val == "{":
            depth += 1
        elif val == "}":
            depth -= 1
            if depth == 0:
                stmt = []
        elif (kind == "ident" and i + 1 < len(toks) and toks[i + 1][1] == "("
              and toks[i - 1][1] not in (".", "->")):
            called.add(val)
    return defined, called


def definition_name(stmt):
    """The function a top-level `... name(params) {` defines, or None."""
    if not stmt or stmt[0][1] == "=" or any(v == "=" for _, v in stmt):
        return None
    level = 0
    for j, (kind, val) in enumerate(stmt):
        if val == "(":
            if level == 0 and j and stmt[j - 1][0] == "ident" and \
               not NOT_A_NAME.fullmatch(stmt[j - 1][1]):
                return stmt[j - 1][1]
            level += 1
        elif val == ")":
            level -= 1
    return None


def graph(top, layer):
    """{file: set of files it calls} over layer/*.c, paths from @top."""
    d = os.path.join(top, layer)
    # *.mod.c: what kbuild leaves when the module is built in kernel/.
    files = sorted(f"{layer}/{n}" for n in os.listdir(d)
                   if n.endswith(".c") and not n.endswith(".mod.c"))
    defs, calls, owner = {}, {}, {}
    for f in files:
        defs[f], calls[f] = scan(os.path.join(top, f))
        for name in defs[f]:
            owner.setdefault(name, []).append(f)
    problems = [f"{name} is defined in {' and '.join(fs)}"
                for name, fs in sorted(owner.items()) if len(fs) > 1]
    g = {f: set() for f in files}
    for f in files:
        for name in calls[f]:
            for o in owner.get(name, ()):
                if o != f:
                    g[f].add(o)
    return g, problems


def sccs(g):
    """Strongly connected components with more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
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
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def a_cycle(g, comp):
    """A shortest cycle through comp[0], comp[0] first and last."""
    start = comp[0]
    prev, todo = {start: None}, [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(g[v]):
            if w == start:
                path = [v]
                while prev[path[-1]]:
                    path.append(prev[path[-1]])
                return path[::-1] + [start]
            if w in comp and w not in prev:
                prev[w] = v
                todo.append(w)
    return comp


def layer_order(g, allow):
    """The files lowest first (each after every file it calls, allowed
    back-edges aside), ties by name; files on a cycle last, by name."""
    calls = {f: {b for b in g[f] if (f, b) not in allow} for f in g}
    order, done = [], set()
    while len(done) < len(g):
        ready = sorted(f for f in g if f not in done and calls[f] <= done)
        if not ready:
            order += sorted(f for f in g if f not in done)
            break
        order += ready
        done.update(ready)
    return order


def read_allow(top):
    """{(from, to): reason} of the allowlist; 'A -> B  reason' lines."""
    allow, problems = {}, []
    path = os.path.join(top, ALLOW)
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = re.fullmatch(r"(\S+)\s*->\s*(\S+)\s+(\S.*)", line)
            if not m:
                problems.append(f"{ALLOW}:{n}: not 'FROM -> TO  reason': {line}")
                continue
            allow[(m.group(1), m.group(2))] = m.group(3)
    return allow, problems


def doc_rows(top):
    """[(file, set of files it calls)] of doc/architecture.md's table rows
    '| `layer/x.c` | ... | `layer/y.c`, ... |' (last cell: what it calls),
    in their order."""
    rows = []
    files = r"(?:%s)/\w+\.c" % "|".join(DOC_LAYERS)
    with open(os.path.join(top, DOC), encoding="utf-8") as f:
        for line in f:
            if not line.lstrip().startswith("|"):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            m = re.fullmatch(r"`?(%s)`?" % files, cells[0])
            if m and len(cells) >= 3:
                rows.append((m.group(1), set(re.findall(files, cells[-1]))))
    return rows


def check_doc(top, graphs, allow):
    """Problems with the doc's tables: a row per file of each layer, its
    calls as the graph has them, and no file calling one below it in the
    table (so "calls only what is above it" is true), allowed edges aside."""
    problems, seen = [], set()
    for f, calls in doc_rows(top):
        g = graphs.get(f.split("/")[0], {})
        if f not in g:
            problems.append(f"{DOC}: a row for {f}, which does not exist")
            continue
        if f in seen:
            problems.append(f"{DOC}: two rows for {f}")
        if calls != g[f]:
            problems.append(
                f"{DOC}: {f} calls {', '.join(sorted(g[f])) or 'nothing'}, "
                f"its row says {', '.join(sorted(calls)) or 'nothing'}")
        for b in sorted(g[f] - seen):
            if (f, b) not in allow:
                problems.append(f"{DOC}: {f} calls {b}, which is not above "
                                "it in the table")
        seen.add(f)
    for layer in DOC_LAYERS:
        for f in sorted(set(graphs[layer]) - seen):
            problems.append(f"{DOC}: no row for {f}")
    return problems


def find_top(start):
    d = os.path.abspath(start)
    while d != os.path.dirname(d):
        if os.path.exists(os.path.join(d, "kernel", "Kbuild")):
            return d
        d = os.path.dirname(d)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--top", help="the tree (default: the one holding "
                    "this script, else the current directory)")
    ap.add_argument("-q", action="store_true", help="print only problems")
    args = ap.parse_args()
    top = args.top or find_top(os.path.dirname(os.path.abspath(__file__))) \
        or find_top(os.getcwd())
    if not top:
        sys.exit("layering: no tree (kernel/Kbuild) above here; use --top")

    allow, problems = read_allow(top)
    graphs, used = {}, set()
    for layer in LAYERS:
        g, p = graph(top, layer)
        graphs[layer] = g
        problems += p
        if not args.q:
            print(f"{layer}, lowest first:")
            for f in layer_order(g, allow):
                print(f"  {f} -> {' '.join(sorted(g[f])) or '(none)'}")
        for comp in sccs(g):
            inside = {(a, b) for a in comp for b in g[a] if b in comp}
            used |= inside & allow.keys()
            rest = {f: {b for b in g[f] if b in comp and (f, b) not in allow}
                    for f in comp}
            for c in sccs(rest):
                problems.append("cycle " + " -> ".join(a_cycle(rest, c)) +
                                " (" + str(len(c)) + " files call each "
                                "other: " + ", ".join(c) + ")")
    problems += check_doc(top, graphs, allow)
    for edge in sorted(allow.keys() - used):
        problems.append(f"{ALLOW}: {edge[0]} -> {edge[1]} closes no cycle "
                        "any more: remove it")

    if not args.q and allow.keys() & used:
        print("allowed back-edges (%s):" % ALLOW)
        for a, b in sorted(allow.keys() & used):
            print(f"  {a} -> {b}: {allow[(a, b)]}")
    for p in problems:
        print("layering: " + p, file=sys.stderr)
    if problems:
        print(f"layering: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print("layering: no cycle outside the allowlist, "
          f"{len(used)} allowed back-edge(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
