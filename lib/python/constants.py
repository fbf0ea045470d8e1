# SPDX-License-Identifier: MIT
"""Writes the acl module's table of constants (aclmodule.c includes it):
C(NAME), for every integer constant the public ACL headers named on the
command line define: each enum's enumerators, each #define of a number and
each static const int.  Names only: the compiler takes their values from
the headers the library is built with.  Run by lib/Makefile.
"""
import re
import sys

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
DEFINE = re.compile(r"^#define\s+(\w+)\s+\(?\d[\w]*\)?\s*$", re.M)
STATIC = re.compile(r"^static const int\s+(\w+)\s*=", re.M)
ENUM = re.compile(r"\benum\b[^{;]*\{([^}]*)\}")

names = set()
for path in sys.argv[1:]:
    with open(path) as f:
        text = COMMENT.sub("", f.read())
    names.update(DEFINE.findall(text), STATIC.findall(text))
    for body in ENUM.findall(text):
        names.update(e.split("=")[0].strip() for e in body.split(",")
                     if e.strip())
print("/* Made by lib/python/constants.py: do not edit. */")
for name in sorted(names):
    print("C(%s)" % name)
