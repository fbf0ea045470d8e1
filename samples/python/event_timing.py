#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""event_timing.py: timing asynchronous copies with events, the pyACL way.

Events recorded on a stream before and after a batch of asynchronous
copies; acl.rt.synchronize_event waits for the end event, then
acl.rt.event_elapsed_time gives the milliseconds between the two records.
Nothing here is libaclmem's own: it runs unchanged on CANN's pyACL.

    . <toolkit>/set_env.sh
    python3 event_timing.py

Prints "PASS event_timing.py" and exits 0 when the copies were right and
the time measured.
"""
import sys

import acl

ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_MEMCPY_DEVICE_TO_DEVICE = 3
ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
DEVICE_ID = 0
SIZE = 4 << 20
ROUNDS = 4


class AclError(Exception):
    pass


def check(ret, what):
    if ret != ACL_SUCCESS:
        raise AclError(f"{what} failed, error code {ret}")


class Sample:
    def __init__(self):
        self.inited = False
        self.device_set = False
        self.stream = None
        self.events = []
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
        for name in ("start", "end"):
            event, ret = acl.rt.create_event()
            check(ret, f"acl.rt.create_event ({name})")
            self.events.append(event)
        self.host, ret = acl.rt.malloc_host(SIZE)
        check(ret, "acl.rt.malloc_host")
        self.dev_a, ret = acl.rt.malloc(SIZE, ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "acl.rt.malloc")
        self.dev_b, ret = acl.rt.malloc(SIZE, ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "acl.rt.malloc")

    def run(self):
        start, end = self.events
        data = bytes((i * 13 + 1) & 0xFF for i in range(SIZE))
        src = acl.util.bytes_to_ptr(data)
        check(acl.rt.record_event(start, self.stream), "acl.rt.record_event (start)")
        for _ in range(ROUNDS):
            check(acl.rt.memcpy_async(self.dev_a, SIZE, src, SIZE,
                                      ACL_MEMCPY_HOST_TO_DEVICE, self.stream),
                  "acl.rt.memcpy_async H2D")
            check(acl.rt.memcpy_async(self.dev_b, SIZE, self.dev_a, SIZE,
                                      ACL_MEMCPY_DEVICE_TO_DEVICE, self.stream),
                  "acl.rt.memcpy_async D2D")
            check(acl.rt.memcpy_async(self.host, SIZE, self.dev_b, SIZE,
                                      ACL_MEMCPY_DEVICE_TO_HOST, self.stream),
                  "acl.rt.memcpy_async D2H")
        check(acl.rt.record_event(end, self.stream), "acl.rt.record_event (end)")
        check(acl.rt.synchronize_event(end), "acl.rt.synchronize_event")
        status, ret = acl.rt.query_event_status(end)
        check(ret, "acl.rt.query_event_status")
        if status != ACL_EVENT_RECORDED_STATUS_COMPLETE:
            raise AclError(f"end event not complete after synchronize_event: {status}")
        ms, ret = acl.rt.event_elapsed_time(start, end)
        check(ret, "acl.rt.event_elapsed_time")
        if ms < 0:
            raise AclError(f"negative elapsed time {ms}")
        if acl.util.ptr_to_bytes(self.host, SIZE) != data:
            raise AclError("the data copied back differs")
        mib = 3 * ROUNDS * SIZE / (1 << 20)
        print(f"[INFO]  {mib:.0f} MiB copied in {ms:.3f} ms between the events")

    def release(self):
        ok = True
        for ptr in (self.dev_a, self.dev_b):
            if ptr is not None:
                ok = acl.rt.free(ptr) == ACL_SUCCESS and ok
        if self.host is not None:
            ok = acl.rt.free_host(self.host) == ACL_SUCCESS and ok
        for event in self.events:
            ok = acl.rt.destroy_event(event) == ACL_SUCCESS and ok
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
    print(f"{'PASS' if ok else 'FAIL'} event_timing.py")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
