# SPDX-License-Identifier: MIT
"""Writes the acl module's table of constants (aclmodule.c includes it):
an #include of each public ACL header named on the command line, and
ACLPY_CONSTANTS(C), C(NAME) for every integer constant they define: each
enum's enumerators, each #define of a number and each static const int.
Names only: the compiler takes their values from the headers included.
Run by lib/Makefile.
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
for path in sys.argv[1:]:
    print('#include "%s"' % path[path.rindex("/include/acl/") + 9:])
print("#define ACLPY_CONSTANTS(C) \\")
print(" \\\n".join("\tC(%s)" % name for name in sorted(names)))
