#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""callback_report.py: host callbacks on a report thread, the pyACL way.

As CANN's callback samples do: a thread started with acl.util.start_thread
runs acl.rt.process_report in a loop; acl.rt.subscribe_report hands it the
stream's callbacks; acl.rt.launch_callback queues Python callables in
stream order, between copies; then unsubscribe_report and stop_thread.
Nothing here is libaclmem's own: it runs unchanged on CANN's pyACL.

    . <toolkit>/set_env.sh
    python3 callback_report.py

Prints "PASS callback_report.py" and exits 0 when every callback ran on
the report thread, in order, after the copy queued before it.
"""
import sys
import threading
import time

import acl

ACL_SUCCESS = 0
ACL_ERROR_RT_REPORT_TIMEOUT = 507012
ACL_ERROR_RT_THREAD_SUBSCRIBE = 107012
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_CALLBACK_NO_BLOCK = 0
ACL_CALLBACK_BLOCK = 1
DEVICE_ID = 0
SIZE = 4096
CALLBACKS = 3
REPORT_TIMEOUT_MS = 100


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
        self.dev = None
        self.host = None
        self.thread_id = None
        self.subscribed = False
        self.running = True
        self.report_errors = []
        self.seen = []

    def init(self):
        check(acl.init(), "acl.init")
        self.inited = True
        check(acl.rt.set_device(DEVICE_ID), "acl.rt.set_device")
        self.device_set = True
        self.context, ret = acl.rt.get_context()
        check(ret, "acl.rt.get_context")
        self.stream, ret = acl.rt.create_stream()
        check(ret, "acl.rt.create_stream")
        self.dev, ret = acl.rt.malloc(SIZE, ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "acl.rt.malloc")
        self.host, ret = acl.rt.malloc_host(SIZE)
        check(ret, "acl.rt.malloc_host")

    # The report thread: takes the stream's callbacks and runs them.
    def process_callback(self, args_list):
        context, timeout = args_list
        ret = acl.rt.set_context(context)
        if ret != ACL_SUCCESS:
            self.report_errors.append(f"acl.rt.set_context: {ret}")
            return
        # The loop runs before subscribe_report (the main thread needs this
        # thread's id first) and after unsubscribe_report: "no stream
        # subscribed" is then no error, and the thread must go on until
        # told to stop, or the stream waits for ever for its callbacks.
        while self.running:
            ret = acl.rt.process_report(timeout)
            if ret == ACL_ERROR_RT_THREAD_SUBSCRIBE:
                time.sleep(0.001)
            elif ret not in (ACL_SUCCESS, ACL_ERROR_RT_REPORT_TIMEOUT):
                self.report_errors.append(f"acl.rt.process_report: {ret}")
                return

    def callback(self, user_data):
        # The copy queued before this callback has run: its bytes are there.
        first = acl.util.ptr_to_bytes(self.host, 1)[0]
        self.seen.append((user_data, threading.get_ident(), first))

    def run(self):
        self.thread_id, ret = acl.util.start_thread(
            self.process_callback, [self.context, REPORT_TIMEOUT_MS])
        check(ret, "acl.util.start_thread")
        check(acl.rt.subscribe_report(self.thread_id, self.stream),
              "acl.rt.subscribe_report")
        self.subscribed = True
        for i in range(CALLBACKS):
            check(acl.rt.memset_async(self.dev, SIZE, i + 1, SIZE, self.stream),
                  "acl.rt.memset_async")
            check(acl.rt.memcpy_async(self.host, SIZE, self.dev, SIZE,
                                      ACL_MEMCPY_DEVICE_TO_HOST, self.stream),
                  "acl.rt.memcpy_async")
            # Blocking: the next memset waits until the callback returned.
            check(acl.rt.launch_callback(self.callback, i, ACL_CALLBACK_BLOCK,
                                         self.stream), "acl.rt.launch_callback")
        check(acl.rt.synchronize_stream(self.stream), "acl.rt.synchronize_stream")
        if self.report_errors:
            raise AclError("; ".join(self.report_errors))
        want = [(i, self.thread_id, i + 1) for i in range(CALLBACKS)]
        if self.seen != want:
            raise AclError(f"callbacks ran as {self.seen}, expected {want}")
        print(f"[INFO]  {CALLBACKS} callbacks ran on the report thread, in order")

    def release(self):
        ok = True
        if self.subscribed:
            ok = acl.rt.unsubscribe_report(self.thread_id, self.stream) == ACL_SUCCESS and ok
        if self.thread_id is not None:
            self.running = False
            ok = acl.util.stop_thread(self.thread_id) == ACL_SUCCESS and ok
        if self.host is not None:
            ok = acl.rt.free_host(self.host) == ACL_SUCCESS and ok
        if self.dev is not None:
            ok = acl.rt.free(self.dev) == ACL_SUCCESS and ok
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
    print(f"{'PASS' if ok else 'FAIL'} callback_report.py")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
