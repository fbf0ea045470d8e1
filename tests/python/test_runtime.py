# SPDX-License-Identifier: MIT
"""acl.rt contexts, streams, events and callbacks; acl.util numpy and threads.

lib/python/runtime.c and lib/python/util.c, with pyACL's names: outputs
first, ret last, handles are ints.  Tests that need /dev/npu-mem are
skipped where the npu_mem module is not loaded; numpy tests are skipped
without numpy (Debian's python3-numpy).

    PYTHONPATH=build/python python3 -m unittest -v tests/python/test_runtime.py
"""
import gc
import os
import subprocess
import sys
import threading
import time
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "build", "python"))

import acl  # noqa: E402

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

DEVICE = os.environ.get("NPU_MEM_DEVICE") or "/dev/npu-mem"
HAVE_DEVICE = os.path.exists(DEVICE) or os.path.exists("/sys/module/npu_mem")
ENV = dict(os.environ, PYTHONPATH=os.path.join(TOP, "build", "python"))
NORMAL = acl.ACL_MEM_MALLOC_NORMAL_ONLY
# An id that names no device: the module's device count (several NPUs in
# the multi-device guest), 1 where it cannot be asked.
NO_DEV = acl.rt.get_device_count()[0] or 1
# Generous: the guest runs under TCG, maybe under valgrind, maybe beside
# other guests.  Every wait with it ends as soon as its event happens.
LONG = 120


def run_py(code, **env):
    out = subprocess.run([sys.executable, "-c", code], env=dict(ENV, **env),
                         capture_output=True, text=True, timeout=120)
    return out


class Constants(unittest.TestCase):
    def test_values_are_cann(self):
        self.assertEqual(acl.ACL_CALLBACK_NO_BLOCK, 0)
        self.assertEqual(acl.ACL_CALLBACK_BLOCK, 1)
        self.assertEqual(acl.ACL_EVENT_SYNC, 1)
        self.assertEqual(acl.ACL_EVENT_CAPTURE_STREAM_PROGRESS, 2)
        self.assertEqual(acl.ACL_EVENT_TIME_LINE, 8)
        self.assertEqual(acl.ACL_EVENT_DEVICE_USE_ONLY, 0x10)
        self.assertEqual(acl.ACL_EVENT_EXTERNAL, 0x20)
        self.assertEqual(acl.ACL_EVENT_IPC, 0x40)
        self.assertEqual(acl.ACL_STREAM_FAST_LAUNCH, 1)
        self.assertEqual(acl.ACL_STREAM_FAST_SYNC, 2)
        self.assertEqual(acl.ACL_STREAM_HUGE, 8)
        self.assertEqual(acl.ACL_STREAM_DEVICE_USE_ONLY, 0x20)
        self.assertEqual(acl.ACL_CONTINUE_ON_FAILURE, 0)
        self.assertEqual(acl.ACL_STOP_ON_FAILURE, 1)
        self.assertEqual(acl.ACL_EVENT_STATUS_COMPLETE, 0)
        self.assertEqual(acl.ACL_EVENT_STATUS_NOT_READY, 1)
        self.assertEqual(acl.ACL_EVENT_RECORDED_STATUS_NOT_READY, 0)
        self.assertEqual(acl.ACL_EVENT_RECORDED_STATUS_COMPLETE, 1)
        self.assertEqual(acl.ACL_EVENT_WAIT_STATUS_RESERVED, 0xFFFF)
        self.assertEqual(acl.ACL_STREAM_STATUS_COMPLETE, 0)
        self.assertEqual(acl.ACL_STREAM_STATUS_NOT_READY, 1)
        self.assertEqual(acl.ACL_ERROR_RT_STREAM_NO_CB_REG, 107015)
        self.assertEqual(acl.ACL_ERROR_RT_THREAD_SUBSCRIBE, 107012)
        self.assertEqual(acl.ACL_ERROR_RT_REPORT_TIMEOUT, 507012)
        self.assertEqual(acl.rt.ACL_CALLBACK_BLOCK, 1)

    def test_type_errors(self):
        calls = [
            (acl.rt.create_context, ("0",)),
            (acl.rt.set_context, (None,)),
            (acl.rt.destroy_context, (1.0,)),
            (acl.rt.create_stream_with_config, (0, "1")),
            (acl.rt.create_event_with_flag, (None,)),
            (acl.rt.record_event, (1, "s")),
            (acl.rt.event_elapsed_time, (1, None)),
            (acl.rt.memset_async, (1, 8, 0, 8, "s")),
            (acl.rt.subscribe_report, ("t", 0)),
            (acl.rt.process_report, (1.5,)),
            (acl.rt.launch_callback, (None, [], 1, 0)),
            (acl.rt.launch_callback, (print, [], "1", 0)),
            (acl.rt.launch_host_func, (0, 42, None)),
            (acl.util.start_thread, (None, [])),
            (acl.util.stop_thread, ("1",)),
            (acl.util.ptr_to_numpy, ("p", (1,), 1)),
        ]
        for fn, args in calls:
            with self.subTest(fn=fn.__name__, args=args):
                with self.assertRaises(TypeError):
                    fn(*args)
        with self.assertRaises(OverflowError):
            acl.rt.create_stream_with_config(1 << 32, 0)
        with self.assertRaises(OverflowError):
            acl.rt.subscribe_report(-1, 0)


class NoDevice(unittest.TestCase):
    """Without a current context or a device: codes, never exceptions."""

    def test_without_context(self):
        code = (
            "import acl\n"
            "assert acl.rt.create_event() == (0, 107002), acl.rt.create_event()\n"
            "assert acl.rt.get_context() == (0, 107002)\n"
            "assert acl.rt.create_stream_with_config(0, 0) == (0, 107002)\n"
            "assert acl.rt.ctx_get_current_default_stream() == (0, 107002)\n"
            "assert acl.rt.stream_query(0) == (0xFFFF, 107002), acl.rt.stream_query(0)\n"
            "assert acl.rt.memset_async(0, 8, 0, 8, 0) == 100000\n"
            "assert acl.rt.set_context(0) == 100000\n"
            "assert acl.rt.destroy_event(0) == 100000\n"
            "assert acl.rt.process_report(-2) == 100000\n"
            "assert acl.rt.process_report(10) == acl.ACL_ERROR_RT_THREAD_SUBSCRIBE\n"
            "assert acl.rt.process_host_func(10) == acl.ACL_ERROR_RT_THREAD_SUBSCRIBE\n"
            "assert acl.rt.get_primary_ctx_state(0) == (0, 0, 0)\n"
            f"assert acl.rt.get_primary_ctx_state({NO_DEV})[2] == 107001\n"
            "assert acl.rt.device_get_stream_priority_range() == (7, 0, 0)\n"
            "assert acl.rt.launch_callback(print, [], 1, 0) == 107002\n"
        )
        out = run_py(code)
        self.assertEqual(out.returncode, 0, out.stderr)

    def test_missing_device(self):
        code = (
            "import acl\n"
            "c, r = acl.rt.create_context(0)\n"
            "assert (c, r) == (0, acl.ACL_ERROR_RT_NO_DEVICE), (c, r)\n"
            "assert acl.rt.create_context(1)[1] == 107001\n"
        )
        out = run_py(code, NPU_MEM_DEVICE="/nonexistent/npu-mem")
        self.assertEqual(out.returncode, 0, out.stderr)


class Threads(unittest.TestCase):
    def test_thread_id_is_pthread_self(self):
        seen = []

        def body(args):
            seen.append((threading.get_ident(), args))

        data = ["x", 1]
        tid, ret = acl.util.start_thread(body, data)
        self.assertEqual(ret, 0)
        self.assertIsInstance(tid, int)
        self.assertEqual(acl.util.stop_thread(tid), 0)
        # CPython's ident is pthread_self(): what the library compares.
        self.assertEqual(seen, [(tid, data)])
        # Stopped: no longer known.
        self.assertEqual(acl.util.stop_thread(tid), acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.util.stop_thread(12345), acl.ACL_ERROR_INVALID_PARAM)

    def test_stop_waits_and_threads_run_concurrently(self):
        gate = threading.Event()
        done = []

        def body(args):
            gate.wait(LONG)
            done.append(args[0])

        ids = []
        for i in range(4):
            tid, ret = acl.util.start_thread(body, [i])
            self.assertEqual(ret, 0)
            ids.append(tid)
        self.assertEqual(len(set(ids)), 4)
        time.sleep(0.05)
        self.assertEqual(done, [])
        gate.set()
        for tid in ids:
            self.assertEqual(acl.util.stop_thread(tid), 0)
        self.assertEqual(sorted(done), [0, 1, 2, 3])

    def test_self_stop_refused_and_exception_reported(self):
        res = []

        def body(args):
            res.append(acl.util.stop_thread(threading.get_ident()))
            raise RuntimeError("from the thread")

        seen = []
        old = sys.unraisablehook
        sys.unraisablehook = lambda u: seen.append(u.exc_type)
        try:
            tid, ret = acl.util.start_thread(body, [])
            self.assertEqual(ret, 0)
            self.assertEqual(acl.util.stop_thread(tid), 0)
        finally:
            sys.unraisablehook = old
        self.assertEqual(res, [acl.ACL_ERROR_INVALID_PARAM])
        self.assertEqual(seen, [RuntimeError])

    def test_references_released(self):
        arg = object()
        base = sys.getrefcount(arg)
        tid, ret = acl.util.start_thread(lambda a: None, arg)
        self.assertEqual(ret, 0)
        self.assertEqual(acl.util.stop_thread(tid), 0)
        self.assertEqual(sys.getrefcount(arg), base)


@unittest.skipIf(np is None, "numpy absent (Debian: python3-numpy)")
class Numpy(unittest.TestCase):
    def test_numpy_to_ptr(self):
        a = np.arange(24, dtype=np.float32).reshape(4, 6)
        ptr = acl.util.numpy_to_ptr(a)
        self.assertEqual(ptr, a.__array_interface__["data"][0])
        self.assertEqual(acl.util.ptr_to_bytes(ptr, a.nbytes), a.tobytes())
        with self.assertRaises(TypeError):
            acl.util.numpy_to_ptr(5)

    def test_discontiguous_warns(self):
        code = (
            "import acl, numpy as np\n"
            "a = np.arange(12).reshape(3, 4)\n"
            "assert acl.util.numpy_to_ptr(a[:, 1]) == a[:, 1].__array_interface__['data'][0]\n"
            "acl.util.numpy_to_ptr(a)\n"
        )
        out = run_py(code)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stderr.count("discontiguous"), 1, out.stderr)
        self.assertIn("numpy_contiguous_to_ptr", out.stderr)

    def test_numpy_contiguous_to_ptr(self):
        a = np.arange(12, dtype=np.int64).reshape(3, 4)
        ptr, out = acl.util.numpy_contiguous_to_ptr(a)
        self.assertIs(out, a)
        self.assertEqual(ptr, a.__array_interface__["data"][0])
        col = a[:, 2]
        ptr, out = acl.util.numpy_contiguous_to_ptr(col)
        self.assertTrue(out.flags.c_contiguous)
        self.assertEqual(out.tolist(), [2, 6, 10])
        self.assertEqual(ptr, out.__array_interface__["data"][0])
        self.assertEqual(acl.util.ptr_to_bytes(ptr, 24), out.tobytes())

    def test_ptr_to_numpy_types(self):
        # numpy's type numbers, as pyACL lists them.
        for num, dt in ((0, np.bool_), (1, np.int8), (2, np.uint8),
                        (3, np.int16), (4, np.uint16), (5, np.int32),
                        (6, np.uint32), (7, np.int64), (8, np.uint64),
                        (9, np.longlong), (10, np.ulonglong),
                        (11, np.float32), (12, np.float64), (23, np.float16)):
            with self.subTest(num=num):
                src = np.ones((2, 3), dtype=dt)
                self.assertEqual(np.dtype(dt).num, num)
                arr = acl.util.ptr_to_numpy(acl.util.numpy_to_ptr(src), (2, 3), num)
                self.assertEqual(arr.dtype, np.dtype(dt))
                self.assertEqual(arr.shape, (2, 3))
                self.assertTrue((arr == src).all())

    def test_ptr_to_numpy_is_a_view(self):
        buf = bytearray(16)
        arr = acl.util.ptr_to_numpy(acl.util.bytes_to_ptr(buf), (4,), 6)
        arr[1] = 0xA1B2C3D4
        self.assertEqual(buf[4:8], (0xA1B2C3D4).to_bytes(4, sys.byteorder))
        self.assertEqual(acl.util.ptr_to_numpy(0, (0, 3), 11).shape, (0, 3))

    def test_ptr_to_numpy_errors(self):
        buf = bytearray(8)
        p = acl.util.bytes_to_ptr(buf)
        for bad in (17, 18, 24, -1):
            with self.assertRaises(ValueError):
                acl.util.ptr_to_numpy(p, (1,), bad)
        with self.assertRaises(ValueError):
            acl.util.ptr_to_numpy(p, (2, -1), 2)
        with self.assertRaises(ValueError):
            acl.util.ptr_to_numpy(0, (4,), 2)
        with self.assertRaises(OverflowError):
            acl.util.ptr_to_numpy(p, (1 << 62, 8), 12)
        with self.assertRaises(TypeError):
            acl.util.ptr_to_numpy(p, 5, 2)


class ReportThread:
    """A thread made by acl.util.start_thread running process_report."""

    def __init__(self, ctx, host_func=False):
        self.stop = False
        self.first = None
        self.host_func = host_func
        self.tid, ret = acl.util.start_thread(self.loop, [ctx])
        assert ret == 0, ret

    def loop(self, args):
        assert acl.rt.set_context(args[0]) == 0
        proc = acl.rt.process_host_func if self.host_func else acl.rt.process_report
        while not self.stop:
            ret = proc(20)
            if ret == acl.ACL_ERROR_RT_THREAD_SUBSCRIBE:
                time.sleep(0.005)   # not subscribed yet, or any more
            elif self.first is None:
                self.first = ret

    def join(self):
        self.stop = True
        return acl.util.stop_thread(self.tid)


@unittest.skipUnless(HAVE_DEVICE, f"{DEVICE} absent: npu_mem module not loaded")
class WithDevice(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ret = acl.init()
        assert ret in (acl.ACL_SUCCESS, acl.ACL_ERROR_REPEAT_INITIALIZE), ret
        assert acl.rt.set_device(0) == acl.ACL_SUCCESS

    @classmethod
    def tearDownClass(cls):
        acl.rt.reset_device(0)
        acl.finalize()

    def setUp(self):
        self.default_ctx, ret = acl.rt.get_context()
        self.assertEqual(ret, 0)
        self.assertNotEqual(self.default_ctx, 0)

    def tearDown(self):
        self.assertEqual(acl.rt.set_context(self.default_ctx), 0)

    # ---- helpers ----

    def malloc(self, size):
        p, ret = acl.rt.malloc(size, NORMAL)
        self.assertEqual(ret, 0)
        self.addCleanup(acl.rt.free, p)
        return p

    def stream(self):
        s, ret = acl.rt.create_stream()
        self.assertEqual(ret, 0)
        return s

    def blocker(self, stream):
        """Hold a stream's worker in a host function until gate is set."""
        gate = threading.Event()
        started = threading.Event()

        def hold(_):
            started.set()
            gate.wait(LONG)

        self.assertEqual(acl.rt.launch_host_func(stream, hold, None), 0)
        self.assertTrue(started.wait(LONG))
        return gate

    # ---- contexts ----

    def test_contexts(self):
        self.assertEqual(acl.rt.get_primary_ctx_state(0), (1, 0, 0))
        self.assertEqual(acl.rt.get_primary_ctx_state(8)[2],
                         acl.ACL_ERROR_RT_INVALID_DEVICEID)
        ctx, ret = acl.rt.create_context(0)
        self.assertEqual(ret, 0)
        self.assertNotIn(ctx, (0, self.default_ctx))
        self.assertEqual(acl.rt.get_context(), (ctx, 0))
        self.assertEqual(acl.rt.set_context(self.default_ctx), 0)
        self.assertEqual(acl.rt.get_context(), (self.default_ctx, 0))
        self.assertEqual(acl.rt.set_context(ctx), 0)
        s, ret = acl.rt.ctx_get_current_default_stream()
        self.assertEqual(ret, 0)
        self.assertNotEqual(s, 0)
        self.assertEqual(acl.rt.destroy_context(self.default_ctx),
                         acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.destroy_context(ctx), 0)
        # The thread's context died with it.
        self.assertEqual(acl.rt.get_context(), (0, acl.ACL_ERROR_RT_CONTEXT_NULL))
        self.assertEqual(acl.rt.set_context(ctx), acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.destroy_context(ctx), acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.destroy_context(0), acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.create_context(NO_DEV),
                         (0, acl.ACL_ERROR_RT_INVALID_DEVICEID))

    def test_context_shared_by_threads(self):
        ctx, ret = acl.rt.create_context(0)
        self.assertEqual(ret, 0)
        self.addCleanup(acl.rt.destroy_context, ctx)
        stream = self.stream()
        n, size = 4, 4096
        buf = self.malloc(n * size)
        results = {}
        barrier = threading.Barrier(n)

        def worker(i):
            # No context yet on a new thread.
            r0 = acl.rt.memset_async(buf, n * size, 0, 1, stream)
            r1 = acl.rt.set_context(ctx)
            barrier.wait(LONG)
            r2 = acl.rt.memset_async(buf + i * size, size, i + 1, size, stream)
            r3 = acl.rt.synchronize_stream(stream)
            results[i] = (r0, r1, r2, r3, acl.rt.get_context())

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(LONG)
        for i in range(n):
            self.assertEqual(results[i], (acl.ACL_ERROR_RT_CONTEXT_NULL, 0, 0, 0,
                                          (ctx, 0)))
            self.assertEqual(acl.util.ptr_to_bytes(buf + i * size, size),
                             bytes([i + 1]) * size)
        # A stream belongs to its context: the default one may not use it.
        self.assertEqual(acl.rt.set_context(self.default_ctx), 0)
        self.assertEqual(acl.rt.memset_async(buf, size, 0, size, stream),
                         acl.ACL_ERROR_RT_STREAM_CONTEXT)
        self.assertEqual(acl.rt.set_context(ctx), 0)
        self.assertEqual(acl.rt.destroy_stream(stream), 0)

    # ---- streams ----

    def test_stream_config_and_queries(self):
        self.assertEqual(acl.rt.device_get_stream_priority_range(), (7, 0, 0))
        s, ret = acl.rt.create_stream_with_config(3, acl.ACL_STREAM_FAST_LAUNCH)
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.stream_get_priority(s), (3, 0))
        self.assertEqual(acl.rt.stream_get_flags(s), (acl.ACL_STREAM_FAST_LAUNCH, 0))
        sid, ret = acl.rt.stream_get_id(s)
        self.assertEqual(ret, 0)
        s2, ret = acl.rt.create_stream_with_config(100, 0)
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.stream_get_priority(s2), (7, 0))
        self.assertNotEqual(acl.rt.stream_get_id(s2)[0], sid)
        self.assertEqual(acl.rt.create_stream_with_config(0, 0x1000),
                         (0, acl.ACL_ERROR_INVALID_PARAM))
        self.assertEqual(acl.rt.stream_get_id(0)[1], 0)
        self.assertEqual(acl.rt.stream_query(s), (acl.ACL_STREAM_STATUS_COMPLETE, 0))
        gate = self.blocker(s)
        self.assertEqual(acl.rt.stream_query(s), (acl.ACL_STREAM_STATUS_NOT_READY, 0))
        self.assertEqual(acl.rt.synchronize_stream_with_timeout(s, 50),
                         acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)
        gate.set()
        self.assertEqual(acl.rt.synchronize_stream_with_timeout(s, -1), 0)
        self.assertEqual(acl.rt.synchronize_stream_with_timeout(s, -2),
                         acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.stream_query(s), (acl.ACL_STREAM_STATUS_COMPLETE, 0))
        for h in (s, s2):
            self.assertEqual(acl.rt.destroy_stream(h), 0)
        self.assertEqual(acl.rt.stream_query(s)[1], acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.stream_get_priority(s), (0, acl.ACL_ERROR_RT_PARAM_INVALID))
        self.assertEqual(acl.rt.stream_get_flags(s), (0, acl.ACL_ERROR_RT_PARAM_INVALID))

    def test_memset_async(self):
        buf = self.malloc(8192)
        s = self.stream()
        self.assertEqual(acl.rt.memset_async(buf, 8192, 0x3C, 8192, s), 0)
        self.assertEqual(acl.rt.synchronize_stream(s), 0)
        self.assertEqual(acl.util.ptr_to_bytes(buf, 8192), b"\x3c" * 8192)
        self.assertEqual(acl.rt.memset_async(buf, 16, 0, 17, s),
                         acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.memset_async(buf, 16, 7, 16, 0), 0)
        self.assertEqual(acl.rt.synchronize_stream(0), 0)
        self.assertEqual(acl.util.ptr_to_bytes(buf, 17), b"\x07" * 16 + b"\x3c")
        self.assertEqual(acl.rt.destroy_stream(s), 0)

    def failure_mode_run(self, mode):
        s = self.stream()
        if mode is not None:
            self.assertEqual(acl.rt.set_stream_failure_mode(s, mode), 0)
        doomed, ret = acl.rt.malloc(4096, NORMAL)
        self.assertEqual(ret, 0)
        good = self.malloc(4096)
        gate = self.blocker(s)
        self.assertEqual(acl.rt.memset_async(doomed, 4096, 1, 4096, s), 0)
        self.assertEqual(acl.rt.free(doomed), 0)     # the queued fill now fails
        self.assertEqual(acl.rt.memset_async(good, 4096, 2, 4096, s), 0)
        gate.set()
        self.assertEqual(acl.rt.synchronize_stream(s), acl.ACL_ERROR_RT_PARAM_INVALID)
        ran = acl.util.ptr_to_bytes(good, 1) == b"\x02"
        self.assertEqual(acl.rt.destroy_stream(s), 0)
        return ran

    def test_stream_failure_mode(self):
        self.assertTrue(self.failure_mode_run(None))
        self.assertTrue(self.failure_mode_run(acl.ACL_CONTINUE_ON_FAILURE))
        self.assertFalse(self.failure_mode_run(acl.ACL_STOP_ON_FAILURE))
        self.assertEqual(acl.rt.set_stream_failure_mode(0, 1), acl.ACL_ERROR_INVALID_PARAM)
        s = self.stream()
        self.assertEqual(acl.rt.set_stream_failure_mode(s, 2), acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.destroy_stream(s), 0)

    def test_stream_abort_and_force_destroy_drop_work(self):
        buf = self.malloc(4096)
        acl.rt.memset(buf, 4096, 0, 4096)
        word = self.malloc(4096)
        acl.rt.memset(word, 8, 0, 8)
        data = object()
        base = sys.getrefcount(data)
        for how in ("abort", "force"):
            with self.subTest(how=how):
                s = self.stream()
                gate = self.blocker(s)
                # Past the gate, a wait nobody satisfies holds the rest
                # until the abort or destroy ends it: the timer below may
                # fire before this thread gets there.
                self.assertEqual(acl.rt.value_wait(word, 1, acl.ACL_STREAM_WAIT_VALUE_EQ, s), 0)
                self.assertEqual(acl.rt.memset_async(buf, 4096, 9, 4096, s), 0)
                ran = []
                self.assertEqual(acl.rt.launch_host_func(s, ran.append, data), 0)
                self.assertGreater(sys.getrefcount(data), base)
                # The running task must end before either returns.
                threading.Timer(0.1, gate.set).start()
                if how == "abort":
                    self.assertEqual(acl.rt.stream_abort(s), 0)
                    self.assertEqual(acl.rt.synchronize_stream(s), 0)
                    # Still usable.
                    self.assertEqual(acl.rt.memset_async(buf, 1, 5, 1, s), 0)
                    self.assertEqual(acl.rt.synchronize_stream(s), 0)
                    self.assertEqual(acl.util.ptr_to_bytes(buf, 2), b"\x05\x00")
                    acl.rt.memset(buf, 4096, 0, 4096)
                    self.assertEqual(acl.rt.destroy_stream(s), 0)
                else:
                    self.assertEqual(acl.rt.destroy_stream_force(s), 0)
                    self.assertEqual(acl.rt.destroy_stream_force(s),
                                     acl.ACL_ERROR_RT_PARAM_INVALID)
                self.assertEqual(ran, [])
                self.assertEqual(acl.util.ptr_to_bytes(buf, 4096), bytes(4096))
                # The dropped host function's references went with the stream.
                self.assertEqual(sys.getrefcount(data), base)
        self.assertEqual(acl.rt.stream_abort(0), acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.destroy_stream_force(0), acl.ACL_ERROR_INVALID_PARAM)

    # ---- events ----

    def test_events_time_async_copies(self):
        size = 16 << 20
        host, ret = acl.rt.malloc_host(size)
        self.assertEqual(ret, 0)
        self.addCleanup(acl.rt.free_host, host)
        dev = self.malloc(size)
        s = self.stream()
        start, ret = acl.rt.create_event()
        self.assertEqual(ret, 0)
        end, ret = acl.rt.create_event()
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.record_event(start, s), 0)
        for _ in range(4):
            self.assertEqual(acl.rt.memcpy_async(dev, size, host, size,
                                                 acl.ACL_MEMCPY_HOST_TO_DEVICE, s), 0)
        # A pause of known length between the records, in stream order.
        self.assertEqual(acl.rt.launch_host_func(s, lambda _: time.sleep(0.05), None), 0)
        self.assertEqual(acl.rt.record_event(end, s), 0)
        self.assertEqual(acl.rt.synchronize_event(end), 0)
        ms, ret = acl.rt.event_elapsed_time(start, end)
        self.assertEqual(ret, 0)
        self.assertIsInstance(ms, float)
        self.assertGreaterEqual(ms, 45.0)
        self.assertLess(ms, 60000.0)
        t0, ret = acl.rt.event_get_timestamp(start)
        self.assertEqual(ret, 0)
        t1, ret = acl.rt.event_get_timestamp(end)
        self.assertEqual(ret, 0)
        self.assertAlmostEqual((t1 - t0) / 1e6, ms, delta=0.01 * ms + 0.01)
        self.assertEqual(acl.rt.event_elapsed_time(end, start),
                         (0.0, acl.ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL))
        self.assertEqual(acl.rt.query_event(end), (acl.ACL_EVENT_STATUS_COMPLETE, 0))
        self.assertEqual(acl.rt.query_event_status(end),
                         (acl.ACL_EVENT_RECORDED_STATUS_COMPLETE, 0))
        for e in (start, end):
            self.assertEqual(acl.rt.destroy_event(e), 0)
        self.assertEqual(acl.rt.destroy_event(end), acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.event_elapsed_time(start, end)[1],
                         acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.destroy_stream(s), 0)

    def test_event_states(self):
        s = self.stream()
        e, ret = acl.rt.create_event()
        self.assertEqual(ret, 0)
        eid, ret = acl.rt.get_event_id(e)
        self.assertEqual(ret, 0)
        # Never recorded.
        self.assertEqual(acl.rt.query_event(e), (acl.ACL_EVENT_STATUS_NOT_READY, 0))
        self.assertEqual(acl.rt.synchronize_event(e), 0)
        self.assertEqual(acl.rt.event_get_timestamp(e),
                         (0, acl.ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID))
        gate = self.blocker(s)
        self.assertEqual(acl.rt.record_event(e, s), 0)
        self.assertEqual(acl.rt.query_event(e), (acl.ACL_EVENT_STATUS_NOT_READY, 0))
        self.assertEqual(acl.rt.query_event_status(e),
                         (acl.ACL_EVENT_RECORDED_STATUS_NOT_READY, 0))
        self.assertEqual(acl.rt.query_event_wait_status(e),
                         (acl.ACL_EVENT_WAIT_STATUS_NOT_READY, 0))
        self.assertEqual(acl.rt.event_get_timestamp(e),
                         (0, acl.ACL_ERROR_RT_EVENT_NOT_COMPLETE))
        self.assertEqual(acl.rt.synchronize_event_with_timeout(e, 50),
                         acl.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT)
        self.assertEqual(acl.rt.synchronize_event_with_timeout(e, -2),
                         acl.ACL_ERROR_INVALID_PARAM)
        gate.set()
        self.assertEqual(acl.rt.synchronize_event_with_timeout(e, LONG * 1000), 0)
        self.assertEqual(acl.rt.query_event_wait_status(e),
                         (acl.ACL_EVENT_WAIT_STATUS_COMPLETE, 0))
        self.assertEqual(acl.rt.reset_event(e, s), 0)
        self.assertEqual(acl.rt.synchronize_stream(s), 0)
        self.assertEqual(acl.rt.query_event(e), (acl.ACL_EVENT_STATUS_NOT_READY, 0))
        # Without a timeline there is no time.
        e2, ret = acl.rt.create_event_with_flag(acl.ACL_EVENT_SYNC)
        self.assertEqual(ret, 0)
        self.assertNotEqual(acl.rt.get_event_id(e2), (eid, 0))
        self.assertEqual(acl.rt.record_event(e2, s), 0)
        self.assertEqual(acl.rt.synchronize_event(e2), 0)
        self.assertEqual(acl.rt.event_get_timestamp(e2),
                         (0, acl.ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID))
        e3, ret = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_TIME_LINE)
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.create_event_with_flag(0x80000),
                         (0, acl.ACL_ERROR_INVALID_PARAM))
        self.assertEqual(acl.rt.create_event_ex_with_flag(0x80000),
                         (0, acl.ACL_ERROR_INVALID_PARAM))
        self.assertEqual(acl.rt.record_event(e3, 12345), acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.record_event(0, s), acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.get_event_id(0), (0, acl.ACL_ERROR_INVALID_PARAM))
        self.assertEqual(acl.rt.query_event(0)[1], acl.ACL_ERROR_INVALID_PARAM)
        for x in (e, e2, e3):
            self.assertEqual(acl.rt.destroy_event(x), 0)
        self.assertEqual(acl.rt.destroy_stream(s), 0)

    def test_event_avail_num(self):
        n0, ret = acl.rt.get_event_avail_num()
        self.assertEqual(ret, 0)
        self.assertGreater(n0, 0)
        e, ret = acl.rt.create_event()
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.get_event_avail_num(), (n0 - 1, 0))
        self.assertEqual(acl.rt.destroy_event(e), 0)
        self.assertEqual(acl.rt.get_event_avail_num(), (n0, 0))

    def test_stream_wait_event(self):
        s1, s2 = self.stream(), self.stream()
        buf = self.malloc(4096)
        acl.rt.memset(buf, 4096, 0, 4096)
        e, ret = acl.rt.create_event()
        self.assertEqual(ret, 0)
        gate = self.blocker(s1)
        self.assertEqual(acl.rt.record_event(e, s1), 0)
        self.assertEqual(acl.rt.stream_wait_event(s2, e), 0)
        self.assertEqual(acl.rt.memset_async(buf, 4096, 0x77, 4096, s2), 0)
        time.sleep(0.05)
        # s2 waits for s1's record, which waits for the gate.
        self.assertEqual(acl.rt.stream_query(s2), (acl.ACL_STREAM_STATUS_NOT_READY, 0))
        self.assertEqual(acl.util.ptr_to_bytes(buf, 1), b"\x00")
        gate.set()
        self.assertEqual(acl.rt.synchronize_stream(s2), 0)
        self.assertEqual(acl.util.ptr_to_bytes(buf, 4096), b"\x77" * 4096)
        self.assertEqual(acl.rt.stream_wait_event(s2, 0), acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.destroy_event(e), 0)
        for s in (s1, s2):
            self.assertEqual(acl.rt.destroy_stream(s), 0)

    # ---- callbacks ----

    def test_callbacks_on_report_thread(self):
        s = self.stream()
        rt = ReportThread(self.default_ctx)
        try:
            self.assertEqual(acl.rt.subscribe_report(rt.tid, s), 0)
            self.assertEqual(acl.rt.subscribe_report(rt.tid, s),
                             acl.ACL_ERROR_RT_STREAM_SUBSCRIBE)
            buf = self.malloc(4096)
            acl.rt.memset(buf, 4096, 0, 4096)
            calls = []
            data = ["user", "data"]
            base = sys.getrefcount(data)

            def cb(arg):
                # Stream order: the fill queued before has run.
                calls.append((threading.get_ident(), arg,
                              acl.util.ptr_to_bytes(buf, 1)))

            for i in range(6):
                self.assertEqual(acl.rt.memset_async(buf, 1, i + 1, 1, s), 0)
                block = acl.ACL_CALLBACK_BLOCK if i % 2 else acl.ACL_CALLBACK_NO_BLOCK
                self.assertEqual(acl.rt.launch_callback(cb, data, block, s), 0)
            self.assertEqual(acl.rt.synchronize_stream_with_timeout(s, LONG * 1000), 0)
            # NO_BLOCK ones may still be queued for the report thread.
            deadline = time.monotonic() + LONG
            while len(calls) < 6 and time.monotonic() < deadline:
                time.sleep(0.01)
            self.assertEqual(len(calls), 6)
            for i, (tid, arg, first) in enumerate(calls):
                self.assertEqual(tid, rt.tid)
                self.assertIs(arg, data)
                # The fill queued before has run; after a BLOCK callback
                # the stream waits, so the next one has not.
                if i % 2:
                    self.assertEqual(first, bytes([i + 1]))
                else:
                    self.assertGreaterEqual(first[0], i + 1)
            del arg, calls[:]
            self.assertEqual(sys.getrefcount(data), base)
            self.assertEqual(acl.rt.launch_callback(cb, data, 2, s),
                             acl.ACL_ERROR_INVALID_PARAM)
            self.assertEqual(sys.getrefcount(data), base)
            self.assertEqual(acl.rt.unsubscribe_report(rt.tid, s), 0)
            self.assertEqual(acl.rt.unsubscribe_report(rt.tid, s),
                             acl.ACL_ERROR_RT_STREAM_SUBSCRIBE)
            # No report thread any more.
            self.assertEqual(acl.rt.launch_callback(cb, data, 1, s),
                             acl.ACL_ERROR_RT_STREAM_NO_CB_REG)
            self.assertEqual(sys.getrefcount(data), base)
        finally:
            self.assertEqual(rt.join(), 0)
        self.assertIn(rt.first, (0, acl.ACL_ERROR_RT_REPORT_TIMEOUT))
        self.assertEqual(acl.rt.destroy_stream(s), 0)

    def test_callback_exception_does_not_stop_the_stream(self):
        s = self.stream()
        rt = ReportThread(self.default_ctx)
        seen, ran = [], []
        old = sys.unraisablehook
        sys.unraisablehook = lambda u: seen.append(u.exc_type)
        try:
            self.assertEqual(acl.rt.subscribe_report(rt.tid, s), 0)

            def bad(_):
                raise ValueError("in a callback")

            self.assertEqual(acl.rt.launch_callback(bad, None, 1, s), 0)
            self.assertEqual(acl.rt.launch_callback(ran.append, 1, 1, s), 0)
            self.assertEqual(acl.rt.synchronize_stream_with_timeout(s, LONG * 1000), 0)
            self.assertEqual(acl.rt.unsubscribe_report(rt.tid, s), 0)
        finally:
            sys.unraisablehook = old
            self.assertEqual(rt.join(), 0)
        self.assertEqual(seen, [ValueError])
        self.assertEqual(ran, [1])
        self.assertEqual(acl.rt.destroy_stream(s), 0)

    def test_process_report_timeout(self):
        s = self.stream()
        out = []
        asked, subscribed = threading.Event(), threading.Event()
        waited, unsubscribed = threading.Event(), threading.Event()

        def body(args):
            out.append(acl.rt.process_report(10))
            asked.set()
            subscribed.wait(LONG)
            t0 = time.monotonic()
            out.append(acl.rt.process_report(100))
            out.append(time.monotonic() - t0)
            waited.set()
            unsubscribed.wait(LONG)
            out.append(acl.rt.process_report(10))

        tid, ret = acl.util.start_thread(body, [])
        self.assertEqual(ret, 0)
        self.assertTrue(asked.wait(LONG))
        self.assertEqual(acl.rt.subscribe_report(tid, s), 0)
        subscribed.set()
        self.assertTrue(waited.wait(LONG))
        self.assertEqual(acl.rt.unsubscribe_report(tid, s), 0)
        unsubscribed.set()
        self.assertEqual(acl.util.stop_thread(tid), 0)
        self.assertEqual(out[0], acl.ACL_ERROR_RT_THREAD_SUBSCRIBE)
        # Subscribed, nothing to run: a timeout, after about 100 ms.
        self.assertEqual(out[1], acl.ACL_ERROR_RT_REPORT_TIMEOUT)
        self.assertGreaterEqual(out[2], 0.09)
        self.assertEqual(out[3], acl.ACL_ERROR_RT_THREAD_SUBSCRIBE)
        self.assertEqual(acl.rt.destroy_stream(s), 0)

    def test_host_func(self):
        s = self.stream()
        order = []
        self.assertEqual(acl.rt.launch_host_func(
            s, lambda a: order.append((a, threading.get_ident())), "w"), 0)
        self.assertEqual(acl.rt.synchronize_stream_with_timeout(s, LONG * 1000), 0)
        self.assertEqual(order[0][0], "w")
        self.assertNotEqual(order[0][1], threading.get_ident())
        ht = ReportThread(self.default_ctx, host_func=True)
        try:
            self.assertEqual(acl.rt.subscribe_host_func(ht.tid, s), 0)
            self.assertEqual(acl.rt.launch_host_func(
                s, lambda a: order.append((a, threading.get_ident())), "h"), 0)
            self.assertEqual(acl.rt.synchronize_stream_with_timeout(s, LONG * 1000), 0)
            self.assertEqual(order[1], ("h", ht.tid))
            self.assertEqual(acl.rt.unsubscribe_host_func(ht.tid, s), 0)
            self.assertEqual(acl.rt.unsubscribe_host_func(ht.tid, s),
                             acl.ACL_ERROR_RT_STREAM_SUBSCRIBE)
        finally:
            self.assertEqual(ht.join(), 0)
        self.assertEqual(acl.rt.launch_host_func(12345, print, None),
                         acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.destroy_stream(s), 0)

    def test_destroy_context_drops_pending_callbacks(self):
        ctx, ret = acl.rt.create_context(0)
        self.assertEqual(ret, 0)
        s = self.stream()
        data = object()
        base = sys.getrefcount(data)
        gate = self.blocker(s)
        self.assertEqual(acl.rt.set_stream_failure_mode(s, acl.ACL_STOP_ON_FAILURE), 0)
        doomed, ret = acl.rt.malloc(4096, NORMAL)
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.memset_async(doomed, 4096, 1, 4096, s), 0)
        self.assertEqual(acl.rt.free(doomed), 0)
        ran = []
        self.assertEqual(acl.rt.launch_host_func(s, ran.append, data), 0)
        gate.set()
        # The failed fill makes the stream drop the host function.
        self.assertEqual(acl.rt.destroy_context(ctx), 0)
        self.assertEqual(ran, [])
        self.assertEqual(sys.getrefcount(data), base)


if __name__ == "__main__":
    unittest.main()
