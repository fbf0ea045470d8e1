#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""multi_thread_context.py: one context shared by three Python threads.

The main thread creates a context; each worker thread makes it current
with acl.rt.set_context (a new thread has no context), creates a stream of
its own on it, fills its own part of a shared device buffer and copies it
back, all three at once.  The main thread checks every part.  Nothing here
is libaclmem's own: it runs unchanged on CANN's pyACL.

    . <toolkit>/set_env.sh
    python3 multi_thread_context.py

Prints "PASS multi_thread_context.py" and exits 0 when every part is right.
"""
import sys
import threading

import acl

ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_DEVICE_TO_HOST = 2
DEVICE_ID = 0
THREADS = 3
PART = 64 * 1024
TIMEOUT_S = 120


class AclError(Exception):
    pass


def check(ret, what):
    if ret != ACL_SUCCESS:
        raise AclError(f"{what} failed, error code {ret}")


class Worker:
    def __init__(self, index, context, dev, host, barrier):
        self.index = index
        self.context = context
        self.dev = dev + index * PART
        self.host = host + index * PART
        self.barrier = barrier
        self.error = None

    def run(self):
        stream = None
        try:
            check(acl.rt.set_context(self.context), "acl.rt.set_context")
            stream, ret = acl.rt.create_stream()
            check(ret, "acl.rt.create_stream")
            # All three streams exist and work at the same time.
            self.barrier.wait(TIMEOUT_S)
            check(acl.rt.memset_async(self.dev, PART, self.index + 1, PART,
                                      stream), "acl.rt.memset_async")
            check(acl.rt.memcpy_async(self.host, PART, self.dev, PART,
                                      ACL_MEMCPY_DEVICE_TO_HOST, stream),
                  "acl.rt.memcpy_async")
            check(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")
        except (AclError, threading.BrokenBarrierError) as e:
            self.error = f"thread {self.index}: {e}"
            self.barrier.abort()
        finally:
            if stream is not None:
                ret = acl.rt.destroy_stream(stream)
                if ret != ACL_SUCCESS and self.error is None:
                    self.error = f"thread {self.index}: acl.rt.destroy_stream: {ret}"


class Sample:
    def __init__(self):
        self.inited = False
        self.device_set = False
        self.context = None
        self.dev = None
        self.host = None

    def init(self):
        check(acl.init(), "acl.init")
        self.inited = True
        check(acl.rt.set_device(DEVICE_ID), "acl.rt.set_device")
        self.device_set = True
        self.context, ret = acl.rt.create_context(DEVICE_ID)
        check(ret, "acl.rt.create_context")
        self.dev, ret = acl.rt.malloc(THREADS * PART, ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "acl.rt.malloc")
        self.host, ret = acl.rt.malloc_host(THREADS * PART)
        check(ret, "acl.rt.malloc_host")

    def run(self):
        barrier = threading.Barrier(THREADS)
        workers = [Worker(i, self.context, self.dev, self.host, barrier)
                   for i in range(THREADS)]
        threads = [threading.Thread(target=w.run) for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT_S)
            if t.is_alive():
                raise AclError("a worker thread did not finish")
        for w in workers:
            if w.error:
                raise AclError(w.error)
            got = acl.util.ptr_to_bytes(w.host, PART)
            if got != bytes([w.index + 1]) * PART:
                raise AclError(f"thread {w.index}: its part holds the wrong bytes")
            print(f"[INFO]  thread {w.index}: {PART} bytes on its own stream")

    def release(self):
        ok = True
        if self.host is not None:
            ok = acl.rt.free_host(self.host) == ACL_SUCCESS and ok
        if self.dev is not None:
            ok = acl.rt.free(self.dev) == ACL_SUCCESS and ok
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
    print(f"{'PASS' if ok else 'FAIL'} multi_thread_context.py")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
