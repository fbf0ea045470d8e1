#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""acl_demo.py: the Python twin of acl_demo.c, with pyACL conventions.

Run with build/python on PYTHONPATH:
    PYTHONPATH=build/python python3 examples/acl_demo.py [size]
"""
import sys

import acl

POLICIES = [
    ("HUGE_FIRST", acl.ACL_MEM_MALLOC_HUGE_FIRST),
    ("HUGE_ONLY", acl.ACL_MEM_MALLOC_HUGE_ONLY),
    ("NORMAL_ONLY", acl.ACL_MEM_MALLOC_NORMAL_ONLY),
    ("HUGE1G_ONLY", acl.ACL_MEM_MALLOC_HUGE1G_ONLY),
]
failures = 0


def check(what, ret):
    global failures
    if ret != acl.ACL_SUCCESS:
        print(f"  FAILED: {what} = {ret}")
        failures += 1


def show_mem_info():
    for name in ("DDR", "HBM", "NORMAL", "HUGE", "HUGE1G", "P2P_HUGE"):
        attr = getattr(acl, "ACL_MEM_" + name, None)
        if attr is None:
            attr = getattr(acl, "ACL_" + name + "_MEM")
        free, total, ret = acl.rt.get_mem_info(attr)
        check("get_mem_info", ret)
        print(f"  {name:9} free {free >> 20:8} MiB  total {total >> 20:8} MiB")


def exercise(name, policy, size):
    global failures
    dev, ret = acl.rt.malloc_cached(size, policy)
    print(f"malloc_cached({size}, {name}) = {ret}")
    if ret != acl.ACL_SUCCESS:
        if policy in (acl.ACL_MEM_MALLOC_HUGE_FIRST,
                      acl.ACL_MEM_MALLOC_NORMAL_ONLY):
            failures += 1
        return
    attrs, ret = acl.rt.pointer_get_attributes(dev)
    print(f"  -> {dev:#x} attributes {attrs}")
    check("memset", acl.rt.memset(dev, size, 0x5A, size))
    pattern = bytes((i * 7 + 3) & 0xFF for i in range(size))
    src = acl.util.bytes_to_ptr(pattern)
    check("memcpy H2D", acl.rt.memcpy(dev, size, src, size,
                                      acl.ACL_MEMCPY_HOST_TO_DEVICE))
    check("mem_flush", acl.rt.mem_flush(dev, size))
    host, ret = acl.rt.malloc_host(size)
    check("malloc_host", ret)
    if ret == acl.ACL_SUCCESS:
        check("mem_invalidate", acl.rt.mem_invalidate(dev, size))
        check("memcpy D2H", acl.rt.memcpy(host, size, dev, size,
                                          acl.ACL_MEMCPY_DEVICE_TO_HOST))
        back = acl.util.ptr_to_bytes(host, size)
        ok = back == pattern
        print(f"  round trip through device memory: {'ok' if ok else 'WRONG'}")
        if not ok:
            failures += 1
        check("free_host", acl.rt.free_host(host))
    check("free", acl.rt.free(dev))


def main():
    size = int(sys.argv[1], 0) if len(sys.argv) > 1 else 1 << 20
    print("init =", acl.init())
    ret = acl.rt.set_device(0)
    print("set_device(0) =", ret)
    if ret != acl.ACL_SUCCESS:
        print("no device: is the npu_mem module loaded?")
        acl.finalize()
        return 1
    print("memory before:")
    show_mem_info()
    for name, policy in POLICIES:
        exercise(name, policy, size)
    print("memory after:")
    show_mem_info()
    check("reset_device", acl.rt.reset_device(0))
    check("finalize", acl.finalize())
    print("acl_demo.py:", "FAILED" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
