#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""notify_ipc.py: a notify between two processes, the pyACL way.

Process A creates a notify, exports its key (pid validation on), starts
process B (this script again, with the key), names B's pid with
acl.rt.notify_set_import_pid, and queues on its stream a wait for the
notify followed by a copy.  B imports the notify by key and records it on
a stream of its own, which releases A's stream.  Nothing here is
libaclmem's own: it runs unchanged on CANN's pyACL.

    . <toolkit>/set_env.sh
    python3 notify_ipc.py           # A; B is "notify_ipc.py --record KEY"

Prints "PASS notify_ipc.py" and exits 0 when A's copy ran after B's record.
"""
import subprocess
import sys

import acl

ACL_SUCCESS = 0
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_STREAM_STATUS_NOT_READY = 1
ACL_NOTIFY_DEFAULT = 0
ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT = 0
ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT = 0
DEVICE_ID = 0
KEY_LEN = 65
SIZE = 64 * 1024
WAIT_TIMEOUT_MS = 120 * 1000


class AclError(Exception):
    pass


def check(ret, what):
    if ret != ACL_SUCCESS:
        raise AclError(f"{what} failed, error code {ret}")


class Resources:
    """What both processes hold: acl, the device and a stream."""

    def __init__(self):
        self.inited = False
        self.device_set = False
        self.stream = None

    def init(self):
        check(acl.init(), "acl.init")
        self.inited = True
        check(acl.rt.set_device(DEVICE_ID), "acl.rt.set_device")
        self.device_set = True
        self.stream, ret = acl.rt.create_stream()
        check(ret, "acl.rt.create_stream")

    def release(self):
        ok = True
        if self.stream is not None:
            ok = acl.rt.destroy_stream(self.stream) == ACL_SUCCESS and ok
        if self.device_set:
            ok = acl.rt.reset_device(DEVICE_ID) == ACL_SUCCESS and ok
        if self.inited:
            ok = acl.finalize() == ACL_SUCCESS and ok
        return ok


class Waiter(Resources):
    """Process A: exports the notify and waits for it on its stream."""

    def __init__(self):
        super().__init__()
        self.notify = None
        self.dev = None
        self.host = None
        self.child = None

    def init(self):
        super().init()
        self.notify, ret = acl.rt.create_notify(ACL_NOTIFY_DEFAULT)
        check(ret, "acl.rt.create_notify")
        self.dev, ret = acl.rt.malloc(SIZE, ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "acl.rt.malloc")
        self.host, ret = acl.rt.malloc_host(SIZE)
        check(ret, "acl.rt.malloc_host")

    def run(self):
        key, ret = acl.rt.notify_get_export_key(
            self.notify, KEY_LEN, ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT)
        check(ret, "acl.rt.notify_get_export_key")
        data = bytes((i * 5 + 9) & 0xFF for i in range(SIZE))
        check(acl.rt.memcpy(self.dev, SIZE, acl.util.bytes_to_ptr(data), SIZE,
                            ACL_MEMCPY_HOST_TO_DEVICE), "acl.rt.memcpy H2D")
        # The copy back waits behind the notify.
        check(acl.rt.wait_and_reset_notify(self.notify, self.stream,
                                           WAIT_TIMEOUT_MS),
              "acl.rt.wait_and_reset_notify")
        check(acl.rt.memcpy_async(self.host, SIZE, self.dev, SIZE,
                                  ACL_MEMCPY_DEVICE_TO_HOST, self.stream),
              "acl.rt.memcpy_async D2H")
        # B imports only once A has named its pid: it waits for a line.
        self.child = subprocess.Popen(
            [sys.executable, __file__, "--record", key], stdin=subprocess.PIPE,
            text=True)
        check(acl.rt.notify_set_import_pid(self.notify, [self.child.pid]),
              "acl.rt.notify_set_import_pid")
        status, ret = acl.rt.stream_query(self.stream)
        check(ret, "acl.rt.stream_query")
        if status != ACL_STREAM_STATUS_NOT_READY:
            raise AclError("the stream went past the wait before B recorded")
        print(f"[INFO]  A: waiting on the notify; B is pid {self.child.pid}",
              flush=True)
        self.child.communicate("go\n", timeout=WAIT_TIMEOUT_MS / 1000)
        rc, self.child = self.child.returncode, None
        if rc != 0:
            raise AclError(f"process B failed, exit status {rc}")
        check(acl.rt.synchronize_stream(self.stream), "acl.rt.synchronize_stream")
        if acl.util.ptr_to_bytes(self.host, SIZE) != data:
            raise AclError("the data copied back differs")
        print("[INFO]  A: released by B's record, copy done")

    def release(self):
        ok = True
        if self.child is not None:
            self.child.kill()
            self.child.wait()
        if self.host is not None:
            ok = acl.rt.free_host(self.host) == ACL_SUCCESS and ok
        if self.dev is not None:
            ok = acl.rt.free(self.dev) == ACL_SUCCESS and ok
        if self.notify is not None:
            ok = acl.rt.destroy_notify(self.notify) == ACL_SUCCESS and ok
        return super().release() and ok


class Recorder(Resources):
    """Process B: imports the notify by its key and records it."""

    def __init__(self, key):
        super().__init__()
        self.key = key
        self.notify = None

    def run(self):
        sys.stdin.readline()     # A has set the pid list
        self.notify, ret = acl.rt.notify_import_by_key(
            self.key, ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT)
        check(ret, "acl.rt.notify_import_by_key")
        check(acl.rt.record_notify(self.notify, self.stream),
              "acl.rt.record_notify")
        check(acl.rt.synchronize_stream(self.stream), "acl.rt.synchronize_stream")
        print("[INFO]  B: notify imported and recorded", flush=True)

    def release(self):
        ok = True
        if self.notify is not None:
            ok = acl.rt.destroy_notify(self.notify) == ACL_SUCCESS and ok
        return super().release() and ok


def main():
    recorder = len(sys.argv) == 3 and sys.argv[1] == "--record"
    sample = Recorder(sys.argv[2]) if recorder else Waiter()
    who = "B" if recorder else "A"
    ok = True
    try:
        sample.init()
        sample.run()
    except (AclError, subprocess.TimeoutExpired) as e:
        print(f"[ERROR] {who}: {e}", file=sys.stderr)
        ok = False
    if not sample.release():
        print(f"[ERROR] {who}: releasing the resources failed", file=sys.stderr)
        ok = False
    if recorder:
        return 0 if ok else 1
    print(f"{'PASS' if ok else 'FAIL'} notify_ipc.py")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
