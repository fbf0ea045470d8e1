# SPDX-License-Identifier: MIT
"""Writes what the acl module's AUTO and DOC rows (calls.h) take from the
public ACL headers named on the command line: for each function returning
aclError whose every parameter has a kind,

  #define ACLPY_SIG_cfn pyname, cfn, (kind, ...)
  #define ACLPY_DOC_cfn "outputs, ret = pyname(inputs)"

pyname is the C name's words without its acl/aclrt/acltdt/aclprof/aclmdl
prefix, in lower case (aclmdlRICaptureBegin -> ri_capture_begin), and the
docstring's names are the C parameters' in the same case.  Kinds by C type:
an integer or an enum is i32, u32, u64, i64 or z; a pointer to one, or to
a handle (void *), is an output; another pointer is p; a const char * is
s; a char * followed by its size_t length is a key.  Run by lib/Makefile.
"""
import re
import sys

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
PROTO = re.compile(r"ACL_FUNC_VISIBILITY\s+aclError\s+(\w+)\s*\(([^)]*)\)")
INT = {"int32_t": "i32", "int": "i32", "uint32_t": "u32", "uint64_t": "u64",
       "int64_t": "i64", "size_t": "z"}
OUT = {"int32_t": "out_i32", "uint32_t": "out_u32", "size_t": "out_z",
       "uint64_t": "out_u64", "int64_t": "out_i64", "float": "out_f"}


def words(name):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_",
                  name).lower()


text = "".join(COMMENT.sub("", open(path).read()) for path in sys.argv[1:])
handles = set(re.findall(r"typedef void \*(\w+);", text))
for name in re.findall(r"typedef enum\b[^{;]*\{[^}]*\}\s*(\w+)\s*;", text):
    INT[name], OUT[name] = "i32", "out_i32"
for name in handles:
    INT[name], OUT[name] = "p", "out_p"
OUT["void *"] = "out_p"


def kind(ctype):
    """The kind of a C type, and whether it is an output; None: none."""
    ctype = re.sub(r"\s+", " ", ctype.replace("*", " * ")).strip()
    bare = re.sub(r"\bconst\b ?", "", ctype).strip()
    if bare == "char *":
        return ("s", False) if ctype.startswith("const") else ("key", True)
    if bare.endswith(" *"):
        return (OUT[bare[:-2]], True) if bare[:-2] in OUT else ("p", False)
    return (INT[bare], False) if bare in INT else (None, False)


print("/* Made by lib/python/calls.py: do not edit. */")
for cfn, params in PROTO.findall(text):
    params = [p.strip() for p in params.split(",") if p.strip() != "void"]
    kinds, ins, outs, key = [], [], [], False
    for param in params:
        ctype, name = re.match(r"(.*?)(\w+)$", param, re.S).groups()
        if key:	# the key's length
            ins.append(words(name))
            key = False
            continue
        k, out = kind(ctype)
        if not k:
            break
        key = k == "key"
        kinds.append(k)
        (outs if out else ins).append(words(name))
    else:
        py = words(re.sub(r"^acl(rt|tdt|prof|mdl)?", "", cfn))
        print("#define ACLPY_SIG_%s %s, %s, (%s)" % (cfn, py, cfn,
                                                    ", ".join(kinds)))
        print('#define ACLPY_DOC_%s "%sret = %s(%s)"' %
              (cfn, "".join(o + ", " for o in outs), py, ", ".join(ins)))
