#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""memcpy_basic.py: memcpy_basic's steps the pyACL way.

pyACL's conventions: pointers are ints, every call returns its outputs and
then the error code, and constants are the program's own (as in CANN's
pyACL samples, which define them rather than import them).  Nothing here
is libaclmem's own: it runs unchanged on CANN's pyACL.

    . <toolkit>/set_env.sh      # puts the acl module on PYTHONPATH
    python3 memcpy_basic.py

Prints "PASS memcpy_basic.py" and exits 0 when every byte came back right.
"""
import sys

import acl

ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_HOST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_MEMCPY_DEVICE_TO_DEVICE = 3
DEVICE_ID = 0
SIZE = 1 << 20


class AclError(Exception):
    pass


def check(ret, what):
    if ret != ACL_SUCCESS:
        raise AclError(f"{what} failed, error code {ret}")


def pattern(seed):
    return bytes((i * 131 + seed) & 0xFF for i in range(SIZE))


class Sample:
    def __init__(self):
        self.inited = False
        self.device_set = False
        self.stream = None
        self.host = None
        self.dev_a = None
        self.dev_b = None

    def init(self):
        check(acl.init(), "acl.init")
        self.inited = True
        check(acl.rt.set_device(DEVICE_ID), "acl.rt.set_device")
        self.device_set = True
        self.stream, ret = acl.rt.create_stream()
        check(ret, "acl.rt.create_stream")
        self.host, ret = acl.rt.malloc_host(SIZE)
        check(ret, "acl.rt.malloc_host")
        self.dev_a, ret = acl.rt.malloc(SIZE, ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "acl.rt.malloc")
        self.dev_b, ret = acl.rt.malloc_cached(SIZE, ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "acl.rt.malloc_cached")

    def run(self):
        data = pattern(5)
        # bytes_to_ptr gives the address of the bytes object's buffer: a
        # source only, never written to.
        src = acl.util.bytes_to_ptr(data)
        check(acl.rt.memcpy(self.dev_a, SIZE, src, SIZE,
                            ACL_MEMCPY_HOST_TO_DEVICE), "memcpy H2D")
        check(acl.rt.memcpy(self.host, SIZE, self.dev_a, SIZE,
                            ACL_MEMCPY_DEVICE_TO_HOST), "memcpy D2H")
        if acl.util.ptr_to_bytes(self.host, SIZE) != data:
            raise AclError("acl.rt.memcpy: data differs")
        print(f"[INFO]  acl.rt.memcpy H2D + D2H: {SIZE} bytes correct")

        zeros = bytes(SIZE)
        check(acl.rt.memcpy(self.host, SIZE, acl.util.bytes_to_ptr(zeros),
                            SIZE, ACL_MEMCPY_HOST_TO_HOST), "memcpy H2H")
        check(acl.rt.memcpy_async(self.dev_b, SIZE, self.dev_a, SIZE,
                                  ACL_MEMCPY_DEVICE_TO_DEVICE, self.stream),
              "memcpy_async D2D")
        check(acl.rt.memcpy_async(self.host, SIZE, self.dev_b, SIZE,
                                  ACL_MEMCPY_DEVICE_TO_HOST, self.stream),
              "memcpy_async D2H")
        check(acl.rt.synchronize_stream(self.stream), "synchronize_stream")
        if acl.util.ptr_to_bytes(self.host, SIZE) != data:
            raise AclError("acl.rt.memcpy_async: data differs")
        print(f"[INFO]  acl.rt.memcpy_async D2D + D2H: {SIZE} bytes correct")

    def release(self):
        ok = True
        for ptr in (self.dev_a, self.dev_b):
            if ptr is not None:
                ok = acl.rt.free(ptr) == ACL_SUCCESS and ok
        if self.host is not None:
            ok = acl.rt.free_host(self.host) == ACL_SUCCESS and ok
        if self.stream is not None:
            ok = acl.rt.destroy_stream(self.stream) == ACL_SUCCESS and ok
        if self.device_set:
            ok = acl.rt.reset_device(DEVICE_ID) == ACL_SUCCESS and ok
        if self.inited:
            ok = acl.finalize() == ACL_SUCCESS and ok
        if not ok:
            print("[ERROR] releasing the resources failed", file=sys.stderr)
        return ok


def main():
    sample = Sample()
    ok = True
    try:
        sample.init()
        sample.run()
    except AclError as e:
        print(f"[ERROR] {e}", file=sys.stderr)
        ok = False
    ok = sample.release() and ok
    print(f"{'PASS' if ok else 'FAIL'} memcpy_basic.py")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
