# SPDX-License-Identifier: MIT
"""A developer tool, not a test: prints every call's answer to valid and
invalid arguments, for comparing a refactor's before and after.

It walks every submodule of the "acl" Python module (lib/python/), prints
each docstring and constant, and calls each function with a range of
argument sets: none, wrong counts, wrong types, ints in and out of range,
None, bytes, dicts with missing, extra and wrong-typed keys, lists.  Each
line is the call and the repr of its result, or the exception's type and
message.  Where there is no /dev/npu-mem the calls answer with error codes,
which is what a comparison needs.

    make -C lib python
    PYTHONPATH=build/python python3 tests/python/answers.py > before.txt
    ... change lib/python/, rebuild ...
    PYTHONPATH=build/python python3 tests/python/answers.py > after.txt
    diff before.txt after.txt

A pointer argument only ever gets 0 or a value the converter refuses (a
garbage address would be dereferenced), and nothing is given that could
block.  Its name does not match test*.py, so the python suite's unittest
discovery does not collect it.
"""
import fnmatch
import io
import os
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "build", "python"))

import acl  # noqa: E402

# Parameters that are addresses or handles: 0 or refused values only.
PTR_WORDS = ("ptr", "stream", "event", "context", "notify", "handle", "dst",
             "src", "start", "end", "dev_addr", "cmo_desc", "notifies",
             "addr_list", "stamp", "step_info", "prof_config", "dataset",
             "data_item", "buf", "model_ri", "label")
# A TDT queue attribute is a handle; other calls' "attr" is an int.
PTR_PARAMS = ("acl.tdt.*.attr",)
NOT_PTR = ("handle_type", "shareable", "share_type", "stm_attr_type")

# Functions without a docstring (system.c): their parameters.
NO_DOC = {
    "acl.sys_get_version_str": ["pkg"],
    "acl.sys_get_version_num": ["pkg"],
    "acl.get_cann_attribute": ["attr"],
    "acl.get_device_capability": ["device_id", "info"],
    "acl.data_type_size": ["type"],
    "acl.float16_to_float": ["value"],
    "acl.float_to_float16": ["value"],
    "acl.rt.get_last_error": ["level"],
    "acl.rt.peek_at_last_error": ["level"],
    "acl.rt.check_arch_compatibility": ["soc"],
    "acl.rt.get_device_info": ["device_id", "attr"],
    "acl.rt.get_device_capability": ["device_id", "info"],
    "acl.rt.query_device_status": ["device_id"],
    "acl.rt.get_device_utilization_rate": ["device_id"],
    "acl.rt.get_device_res_limit": ["device_id", "type"],
    "acl.rt.set_device_res_limit": ["device_id", "type", "value"],
    "acl.rt.reset_device_res_limit": ["device_id"],
    "acl.rt.device_can_access_peer": ["device_id", "peer"],
    "acl.rt.device_enable_peer_access": ["peer", "flags"],
    "acl.rt.device_disable_peer_access": ["peer"],
    "acl.rt.device_peer_access_status": ["device_id", "peer"],
    "acl.rt.device_get_uuid": ["device_id"],
}

# Answers whose first item is an address, a thread id or a pid: only its
# type is stable.
ADDRESSES = ("acl.util.bytes_to_ptr", "acl.util.numpy_to_ptr",
             "acl.util.numpy_contiguous_to_ptr", "acl.util.start_thread",
             "acl.rt.reserve_mem_address", "acl.rt.device_get_bare_tgid",
             "acl.prof.create_config", "acl.prof.create_stamp",
             "acl.prof.create_step_info", "acl.tdt.alloc_buf",
             "acl.tdt.create_channel", "acl.tdt.create_data_item",
             "acl.tdt.create_dataset", "acl.tdt.create_queue_attr")

LOC = {"id": 0, "type": 1}
PROP = {"handleType": 0, "allocationType": 0, "memAttr": 0,
        "location": LOC, "reserve": 0}


class Opaque:
    """An object of no type the module takes, with a stable repr."""

    def __repr__(self):
        return "<opaque>"


def without(d, key):
    return {k: v for k, v in d.items() if k != key}


def variants(d, bad):
    """d, d without each key, and d with each key given each bad value."""
    out = [d] + [without(d, k) for k in d]
    for k in d:
        out += [dict(d, **{k: b}) for b in bad]
    return out + [dict(d, extra=1)]


BAD = ["a", None, -1, 1 << 31, 1 << 32, 1 << 64, 1.5, [], {}]
STRUCTS = (
    variants(LOC, BAD)
    + variants(PROP, BAD)
    + [dict(PROP, location=v) for v in variants(LOC, ["a", -1, 1 << 32])]
    + [{"attrs": []}, {"attrs": [], "numAttrs": 0},
       {"attrs": [], "numAttrs": 1}, {"attrs": [], "numAttrs": -1},
       {"attrs": [], "numAttrs": "a"}, {"attrs": 5}, {"attrs": ()},
       {"numAttrs": 0}, {"attrs": [5]}, {"attrs": [{}]}]
    + [{"attrs": [a]} for a in variants({"attr": 1,
                                         "value": {"moduleId": 3}}, BAD)]
    + [{"attrs": [{"attr": 1, "value": v}]} for v in
       [{}, {"moduleId": 1 << 16}, {"moduleId": 1, "deviceId": 2},
        {"deviceId": 1 << 32}, {"vaFlag": -1}, {"bogus": 1}, {5: 1},
        {"rsv": [1, 2]}, {"rsv": [1] * 9}, {"rsv": [256]}, {"rsv": "ab"},
        {"rsv": ["a"]}, {"rsv": (1,)}, {"rsv": [-1]}, 5, None]]
    + [{"attrs": [{"attr": 1, "value": {"moduleId": 1}}] * 2,
        "numAttrs": 2}]
    + [{"priority": 1}, {"flag": 2}, {"priority": 1, "flag": 2},
       {"flag": 1 << 64}, {"priority": 1 << 32}, {"bogus": 1}, {1: 2},
       {"priority": "a"}, {"flag": None}]
    + [{"failureMode": 1}, {"overflowSwitch": 1}, {"userCustomTag": 1 << 33},
       {"cacheOpInfoSwitch": -1}, {"streamPriority": "a"}]
)
LISTS = (
    [[], [0], [0, 1], (0, 1), [-1], [1 << 32], ["a"], [None], [1.5]]
    + [[d] for d in variants({"flags": 1, "location": LOC},
                             ["a", -1, 1 << 31, 5])]
    + [[d] for d in variants({"cmoType": 1, "barrierId": 2},
                             ["a", -1, 1 << 32])]
    + [[{"cmoType": 1, "barrierId": 2}] * 6,
       [{"cmoType": 1, "barrierId": 2}] * 7]
    + [[d] for d in variants({"dstLoc": LOC, "srcLoc": {"type": 1}},
                             ["a", 5, {}, {"id": 1}, {"id": "a", "type": 1},
                              {"type": 1 << 32}])]
    + [[5], [{}], [[0]]]
)
SCALARS = [0, 1, 2, 6, 11, 23, 24, -1, -(1 << 31), -(1 << 31) - 1,
           (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32, 1 << 63,
           (1 << 64) - 1, 1 << 64, -(1 << 63) - 1, 0xFFFF, 0x10000, True,
           None, "", "a", "x" * 300, b"", b"ab", bytes(64), bytes(65),
           bytes(127), bytes(128), bytes(129), bytearray(b"ab"), 1.5,
           float("nan"), 1e300, -0.0, Opaque(), print]
PTR_VALUES = [0, -1, 1 << 64, -(1 << 63) - 1, None, "a", b"a", 1.5, [], {},
              [0], [0, 0], (0,), [-1], [1 << 64], ["a"], [None], {"a": 1}]


def show(v):
    try:
        return repr(v)
    except Exception as e:  # a repr that raises is an answer too
        return "<repr raised %s>" % type(e).__name__


def params(qual, f):
    if qual in NO_DOC:
        return NO_DOC[qual]
    doc = f.__doc__ or ""
    head = doc.split(":")[0]
    if "(" not in head:
        return []
    inner = head[head.index("(") + 1:head.rindex(")")]
    inner = inner.replace("[", "").replace("]", "")
    return [p.strip() for p in inner.split(",") if p.strip()]


def is_ptr(qual, name):
    if any(fnmatch.fnmatchcase(qual + "." + name, p) for p in PTR_PARAMS):
        return True
    return name not in NOT_PTR and any(w in name for w in PTR_WORDS)


def call(qual, f, args, kwargs=None):
    err = io.StringIO()
    old, sys.stderr = sys.stderr, err
    try:
        res = f(*args, **(kwargs or {}))
        if qual in ADDRESSES:
            if isinstance(res, tuple):
                res = (type(res[0]).__name__,) + res[1:]
            else:
                res = type(res).__name__
            out = "-> " + show(res)
        else:
            out = "-> " + show(res)
    except Exception as e:
        out = "!! %s: %s" % (type(e).__name__, e)
    finally:
        sys.stderr = old
    line = "%s%s %s" % (qual, show(tuple(args)), out)
    if kwargs:
        line += " kwargs=" + show(kwargs)
    if err.getvalue():
        line += " stderr=" + show(err.getvalue())
    print(line)


def arg_sets(qual, names):
    base = [0] * len(names)
    sets = [(), tuple(base), tuple(base + [0]), (0,) * 11]
    if base:
        sets.append(tuple(base[:-1]))
    for i, n in enumerate(names):
        pool = PTR_VALUES if is_ptr(qual, n) else SCALARS + STRUCTS + LISTS
        for v in pool:
            a = list(base)
            a[i] = v
            sets.append(tuple(a))
    return sets


def extra_sets(qual):
    """Arguments whose meaning depends on another argument's value."""
    name = qual.rsplit(".", 1)[1]
    values = [1, -1, 1 << 32, 1 << 64, "a", {}, {"x": 1}] + STRUCTS[-5:]
    if name == "set_stream_attribute":
        return [(0, t, v) for t in range(7) for v in values]
    if name == "get_stream_attribute":
        return [(0, t) for t in range(7)]
    if name == "mem_import_from_shareable_handle_v2":
        return [(h, t, 0) for t in (0, 1, 2)
                for h in (0, 1 << 64, b"", bytes(127), bytes(128), "a")]
    if name == "mem_set_pid_to_shareable_handle_v2":
        return [(h, t, p) for t in (0, 1) for h in (0, bytes(128), "a")
                for p in ([], [1], [1 << 32], 5)]
    if name == "mem_export_to_shareable_handle_v2":
        return [(0, 0, t) for t in (0, 1, 2)]
    if name.startswith("memcpy_batch"):
        ok = ([0], [0], [0], [0], [{"dstLoc": LOC, "srcLoc": LOC}], [0])
        sets = [ok, ok + (0,)]
        for i in range(6):
            for v in ([], [0, 0], (0,), "ab", 5, [None]):
                a = list(ok)
                a[i] = v
                sets += [tuple(a), tuple(a) + (0,)]
        return sets
    if name == "ptr_to_numpy":
        return [(0, s, t) for s in ([], [0], (0, 3), [2, 0], [1 << 62, 4],
                                    [-1], ["a"], 5, "ab")
                for t in (-1, 0, 11, 12, 13, 17, 23, 24)]
    if name == "check_mem_type":
        return [([0], 1), ([0], 1, 2), ([0], 1, 2, 3), ([0], -1)]
    return []


def walk(mod):
    print("module %s doc=%s" % (mod.__name__, show(mod.__doc__)))
    for name in sorted(dir(mod)):
        v = getattr(mod, name)
        if name.startswith("__") or isinstance(v, type(acl)):
            continue
        if not callable(v):
            print("%s.%s = %s" % (mod.__name__, name, show(v)))
            continue
        qual = "%s.%s" % (mod.__name__, name)
        print("%s %s doc=%s" % (qual, type(v).__name__, show(v.__doc__)))
        if name in ("start_thread", "stop_thread"):
            continue
        for args in arg_sets(qual, params(qual, v)) + extra_sets(qual):
            call(qual, v, args)
        call(qual, v, (), {"x": 1})
    for name in sorted(dir(mod)):
        v = getattr(mod, name)
        if not name.startswith("__") and isinstance(v, type(acl)):
            walk(v)


def threads():
    """start_thread and stop_thread, by themselves: an id is not stable."""
    u = acl.util
    for args in [(), (None, None), (5, ()), (print,), (print, (), 1)]:
        call("acl.util.start_thread", u.start_thread, args)
    res = u.start_thread(lambda a: None, ())
    print("acl.util.start_thread(<func>, ()) -> %s" %
          show((type(res[0]).__name__, res[1])))
    for args in [(), (None,), ("a",), (-1,), (1 << 64,), (0,), (res[0],),
                 (res[0],), (1, 2)]:
        if args and args[0] is res[0]:
            print("acl.util.stop_thread(<id>) -> %s" %
                  show(u.stop_thread(*args)))
            continue
        call("acl.util.stop_thread", u.stop_thread, args)


def main():
    walk(acl)
    print("sys.modules: %s" % show(sorted(n for n in sys.modules
                                          if n.startswith("acl"))))
    threads()


if __name__ == "__main__":
    main()
