#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""context_stream.py: an explicit context with a stream on it, the pyACL way.

The steps of CANN's resource-management samples: acl.init, set_device,
create_context, create_stream on that context, host and device buffers, a
synchronous copy in and an asynchronous copy back, then everything
released in CANN's order (buffers, stream, context, device, finalize).
Nothing here is libaclmem's own: it runs unchanged on CANN's pyACL.

    . <toolkit>/set_env.sh      # puts the acl module on PYTHONPATH
    python3 context_stream.py

Prints "PASS context_stream.py" and exits 0 when the data came back right.
"""
import sys

import acl

ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
DEVICE_ID = 0
SIZE = 256 * 1024


class AclError(Exception):
    pass


def check(ret, what):
    if ret != ACL_SUCCESS:
        raise AclError(f"{what} failed, error code {ret}")


class Sample:
    def __init__(self):
        self.inited = False
        self.device_set = False
        self.context = None
        self.stream = None
        self.host = None
        self.dev = None

    def init(self):
        check(acl.init(), "acl.init")
        self.inited = True
        check(acl.rt.set_device(DEVICE_ID), "acl.rt.set_device")
        self.device_set = True
        self.context, ret = acl.rt.create_context(DEVICE_ID)
        check(ret, "acl.rt.create_context")
        # create_context made it current: the stream belongs to it.
        current, ret = acl.rt.get_context()
        check(ret, "acl.rt.get_context")
        if current != self.context:
            raise AclError("acl.rt.create_context did not make the context current")
        self.stream, ret = acl.rt.create_stream()
        check(ret, "acl.rt.create_stream")
        self.host, ret = acl.rt.malloc_host(SIZE)
        check(ret, "acl.rt.malloc_host")
        self.dev, ret = acl.rt.malloc(SIZE, ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "acl.rt.malloc")
        print(f"[INFO]  context {self.context:#x}, stream {self.stream:#x}")

    def run(self):
        data = bytes((i * 7 + 3) & 0xFF for i in range(SIZE))
        check(acl.rt.memcpy(self.dev, SIZE, acl.util.bytes_to_ptr(data), SIZE,
                            ACL_MEMCPY_HOST_TO_DEVICE), "acl.rt.memcpy H2D")
        check(acl.rt.memcpy_async(self.host, SIZE, self.dev, SIZE,
                                  ACL_MEMCPY_DEVICE_TO_HOST, self.stream),
              "acl.rt.memcpy_async D2H")
        check(acl.rt.synchronize_stream(self.stream), "acl.rt.synchronize_stream")
        if acl.util.ptr_to_bytes(self.host, SIZE) != data:
            raise AclError("the data copied back differs")
        print(f"[INFO]  {SIZE} bytes there and back on the context's stream")

    def release(self):
        ok = True
        if self.dev is not None:
            ok = acl.rt.free(self.dev) == ACL_SUCCESS and ok
        if self.host is not None:
            ok = acl.rt.free_host(self.host) == ACL_SUCCESS and ok
        if self.stream is not None:
            ok = acl.rt.destroy_stream(self.stream) == ACL_SUCCESS and ok
        if self.context is not None:
            ok = acl.rt.destroy_context(self.context) == ACL_SUCCESS and ok
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
    print(f"{'PASS' if ok else 'FAIL'} context_stream.py")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
