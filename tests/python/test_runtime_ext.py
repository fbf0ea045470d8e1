# SPDX-License-Identifier: MIT
"""acl.rt notifies, IPC events, timed waits, values, settings and device ids.

lib/python/runtime_ext.c, with pyACL's names where pyACL has them: outputs
first, ret last, handles are ints.  Tests that need /dev/npu-mem are
skipped where the npu_mem module is not loaded.

    PYTHONPATH=build/python python3 -m unittest -v tests/python/test_runtime_ext.py
"""
import os
import subprocess
import sys
import threading
import time
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "build", "python"))

import acl  # noqa: E402

DEVICE = os.environ.get("NPU_MEM_DEVICE") or "/dev/npu-mem"
HAVE_DEVICE = os.path.exists(DEVICE) or os.path.exists("/sys/module/npu_mem")
ENV = dict(os.environ, PYTHONPATH=os.path.join(TOP, "build", "python"))
NORMAL = acl.ACL_MEM_MALLOC_NORMAL_ONLY
# Generous: the guest runs under TCG, maybe under valgrind.
LONG = 30


def run_py(code, **env):
    return subprocess.run([sys.executable, "-c", code], env=dict(ENV, **env),
                          capture_output=True, text=True, timeout=120)


class Constants(unittest.TestCase):
    def test_values_are_cann(self):
        self.assertEqual(acl.ACL_NOTIFY_DEFAULT, 0)
        self.assertEqual(acl.ACL_NOTIFY_DEVICE_USE_ONLY, 1)
        self.assertEqual(acl.ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT, 0)
        self.assertEqual(acl.ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION, 2)
        self.assertEqual(acl.ACL_RT_NOTIFY_IMPORT_FLAG_DEFAULT, 0)
        self.assertEqual(acl.ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS, 2)
        self.assertEqual(acl.ACL_IPC_EVENT_HANDLE_SIZE, 64)
        self.assertEqual([acl.ACL_STREAM_WAIT_VALUE_GEQ, acl.ACL_STREAM_WAIT_VALUE_EQ,
                          acl.ACL_STREAM_WAIT_VALUE_AND, acl.ACL_STREAM_WAIT_VALUE_NOR],
                         [0, 1, 2, 3])
        self.assertEqual((acl.ACL_OPT_DETERMINISTIC, acl.ACL_OPT_ENABLE_DEBUG_KERNEL), (0, 1))
        self.assertEqual((acl.ACL_RT_OVERFLOW_MODE_SATURATION,
                          acl.ACL_RT_OVERFLOW_MODE_INFNAN,
                          acl.ACL_RT_OVERFLOW_MODE_UNDEF), (0, 1, 2))
        self.assertEqual((acl.ACL_TS_ID_AICORE, acl.ACL_TS_ID_AIVECTOR,
                          acl.ACL_TS_ID_RESERVED), (0, 1, 2))
        self.assertEqual(acl.ACL_RT_DEV_LIMIT_SIMT_STACK_SIZE, 0)
        self.assertEqual(acl.ACL_RT_DEV_LIMIT_SIMT_PRINTF_FIFO_SIZE, 4)
        self.assertEqual(acl.ACL_ERROR_RT_WAIT_TIMEOUT, 107019)
        self.assertEqual(acl.ACL_ERROR_RT_SYSPARAMOPT_NOT_SET, 107021)
        self.assertEqual(acl.ACL_ERROR_RT_NO_NOTIFY_RESOURCE, 207009)
        self.assertEqual(acl.ACL_ERROR_RT_ADDR_UNALIGNED, 107008)
        self.assertEqual(acl.rt.ACL_NOTIFY_DEVICE_USE_ONLY, 1)

    def test_argument_errors(self):
        type_errors = [
            (acl.rt.create_notify, ("0",)),
            (acl.rt.record_notify, (1, None)),
            (acl.rt.notify_get_export_key, (1, "65", 0)),
            (acl.rt.notify_set_import_pid, (1, 5)),
            (acl.rt.notify_set_import_pid, (1, ["1"])),
            (acl.rt.notify_import_by_key, (5, 0)),
            (acl.rt.ipc_open_event_handle, ("text",)),
            (acl.rt.stream_wait_event_with_timeout, (0, 0, 1.5)),
            (acl.rt.value_write, (1, 1.0, 0, 0)),
            (acl.rt.set_sys_param_opt, (0, None)),
            (acl.rt.device_get_limit, ("0",)),
            (acl.rt.get_user_dev_id_by_logic_dev_id, (None,)),
            (acl.rt.get_devices_topo, (0, "1")),
        ]
        for fn, args in type_errors:
            with self.subTest(fn=fn.__name__, args=args):
                with self.assertRaises(TypeError):
                    fn(*args)
        with self.assertRaises(OverflowError):
            acl.rt.wait_and_reset_notify(1, 0, 1 << 32)
        with self.assertRaises(OverflowError):
            acl.rt.value_wait(1, -1, 0, 0)
        with self.assertRaises(OverflowError):
            acl.rt.notify_set_import_pid(1, [1 << 31])
        with self.assertRaises(ValueError):
            acl.rt.ipc_open_event_handle(b"k" * 65)


class NoDevice(unittest.TestCase):
    """Without a current context: codes, never exceptions."""

    def test_without_context(self):
        code = (
            "import acl\n"
            "def eq(got, want):\n"
            "    assert got == want, (got, want)\n"
            "for f in (acl.rt.get_logic_dev_id_by_phy_dev_id,\n"
            "          acl.rt.get_phy_dev_id_by_logic_dev_id,\n"
            "          acl.rt.get_user_dev_id_by_phy_dev_id,\n"
            "          acl.rt.get_phy_dev_id_by_user_dev_id,\n"
            "          acl.rt.get_logic_dev_id_by_user_dev_id,\n"
            "          acl.rt.get_user_dev_id_by_logic_dev_id):\n"
            "    eq(f(0), (0, 0))\n"
            "    eq(f(1), (0, 107001))\n"
            "    eq(f(-1), (0, 107001))\n"
            "eq(acl.rt.get_devices_topo(0, 0), (0, 100000))\n"
            "eq(acl.rt.get_devices_topo(0, 1), (0, 107001))\n"
            "eq(acl.rt.set_ts_device(acl.ACL_TS_ID_AIVECTOR), 0)\n"
            "eq(acl.rt.set_ts_device(acl.ACL_TS_ID_RESERVED), 100000)\n"
            "eq(acl.rt.device_get_limit(0), (0, 207000))\n"
            "eq(acl.rt.device_get_limit(5), (0, 100000))\n"
            "eq(acl.rt.device_set_limit(4, 1 << 20), 207000)\n"
            "eq(acl.rt.device_set_limit(9, 0), 100000)\n"
            "eq(acl.rt.get_sys_param_opt(0), (0, acl.ACL_ERROR_RT_SYSPARAMOPT_NOT_SET))\n"
            "eq(acl.rt.set_sys_param_opt(0, 1), 0)\n"
            "eq(acl.rt.get_sys_param_opt(0), (1, 0))\n"
            "eq(acl.rt.set_sys_param_opt(1, 1 << 40), 0)\n"
            "eq(acl.rt.get_sys_param_opt(1), (1 << 40, 0))\n"
            "eq(acl.rt.set_sys_param_opt(2, 1), 100000)\n"
            "eq(acl.rt.set_sys_param_opt(0, -1), 100000)\n"
            "eq(acl.rt.ctx_get_sys_param_opt(0), (0, 107002))\n"
            "eq(acl.rt.ctx_set_sys_param_opt(0, 1), 107002)\n"
            "eq(acl.rt.get_device_sat_mode(), (0, 107002))\n"
            "eq(acl.rt.set_device_sat_mode(1), 107002)\n"
            "eq(acl.rt.set_device_sat_mode(2), 100000)\n"
            "eq(acl.rt.create_notify(0), (0, 107002))\n"
            "eq(acl.rt.create_notify(2), (0, 100000))\n"
            "eq(acl.rt.notify_import_by_key('aclmem:1:2:x', 0), (0, 107002))\n"
            "eq(acl.rt.notify_import_by_key('aclmem:1:2:x', 1), (0, 100000))\n"
            "eq(acl.rt.destroy_notify(0), 100000)\n"
            "eq(acl.rt.notify_get_export_key(0, 65, 0), ('', 100000))\n"
            "eq(acl.rt.ipc_get_event_handle(0), (b'', 100000))\n"
            "eq(acl.rt.value_write(0, 1, 1, 0), 100000)\n"
        )
        out = run_py(code)
        self.assertEqual(out.returncode, 0, out.stderr)


# The importing side of the notify between processes: reads the key on
# stdin, says what the import returned, records the notify on a stream.
IMPORTER = """
import sys
import acl
key = sys.stdin.readline().strip()
assert acl.rt.set_device(0) == 0
notify, ret = acl.rt.notify_import_by_key(key, 0)
print("import", ret, flush=True)
if ret == 0:
    stream, r = acl.rt.create_stream()
    assert r == 0, r
    assert acl.rt.record_notify(notify, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert acl.rt.destroy_notify(notify) == 0
assert acl.rt.reset_device(0) == 0
"""


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

    # ---- helpers ----

    def malloc(self, size):
        """Zeroed device memory (pooled buffers keep their old bytes)."""
        p, ret = acl.rt.malloc(size, NORMAL)
        self.assertEqual(ret, 0)
        self.addCleanup(acl.rt.free, p)
        self.assertEqual(acl.rt.memset(p, size, 0, size), 0)
        return p

    def stream(self):
        s, ret = acl.rt.create_stream()
        self.assertEqual(ret, 0)
        self.addCleanup(acl.rt.destroy_stream, s)
        return s

    def notify(self):
        n, ret = acl.rt.create_notify(acl.ACL_NOTIFY_DEFAULT)
        self.assertEqual(ret, 0)
        self.assertNotEqual(n, 0)
        return n

    def blocker(self, stream):
        """Hold a stream's worker in a host function until gate is set."""
        gate = threading.Event()
        started = threading.Event()

        def hold(_):
            started.set()
            gate.wait(LONG)

        self.assertEqual(acl.rt.launch_host_func(stream, hold, None), 0)
        self.assertTrue(started.wait(LONG))
        self.addCleanup(gate.set)
        return gate

    def assert_waiting(self, stream, buf, size):
        """The stream has not got past its wait: nothing after it ran."""
        time.sleep(0.1)
        self.assertEqual(acl.rt.stream_query(stream),
                         (acl.ACL_STREAM_STATUS_NOT_READY, 0))
        self.assertEqual(acl.util.ptr_to_bytes(buf, size), bytes(size))

    # ---- notifies ----

    def test_notify_record_then_wait(self):
        n = self.notify()
        nid, ret = acl.rt.get_notify_id(n)
        self.assertEqual(ret, 0)
        n2 = self.notify()
        self.assertNotEqual(acl.rt.get_notify_id(n2), (nid, 0))
        waiter, setter = self.stream(), self.stream()
        buf = self.malloc(4096)
        self.assertEqual(acl.rt.wait_and_reset_notify(n, waiter, LONG * 1000), 0)
        self.assertEqual(acl.rt.memset_async(buf, 4096, 0x33, 4096, waiter), 0)
        self.assert_waiting(waiter, buf, 4096)
        self.assertEqual(acl.rt.record_notify(n, setter), 0)
        self.assertEqual(acl.rt.synchronize_stream(waiter), 0)
        self.assertEqual(acl.util.ptr_to_bytes(buf, 4096), b"\x33" * 4096)
        # A flag, not a count, and the wait cleared it: two records, then
        # two waits; the second times out and fails the synchronisation.
        self.assertEqual(acl.rt.record_notify(n, setter), 0)
        self.assertEqual(acl.rt.record_notify(n, setter), 0)
        self.assertEqual(acl.rt.synchronize_stream(setter), 0)
        self.assertEqual(acl.rt.wait_and_reset_notify(n, waiter, 100), 0)
        self.assertEqual(acl.rt.synchronize_stream(waiter), 0)
        self.assertEqual(acl.rt.wait_and_reset_notify(n, waiter, 100), 0)
        self.assertEqual(acl.rt.synchronize_stream(waiter),
                         acl.ACL_ERROR_RT_WAIT_TIMEOUT)
        self.assertEqual(acl.rt.destroy_notify(n2), 0)
        self.assertEqual(acl.rt.destroy_notify(n), 0)
        # Gone: every call on it is refused.
        self.assertEqual(acl.rt.destroy_notify(n), acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.record_notify(n, setter), acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.get_notify_id(n), (0, acl.ACL_ERROR_RT_PARAM_INVALID))

    def test_export_key_and_import_pids(self):
        n = self.notify()
        self.addCleanup(acl.rt.destroy_notify, n)
        self.assertEqual(acl.rt.notify_get_export_key(n, 63, 0),
                         ("", acl.ACL_ERROR_INVALID_PARAM))
        self.assertEqual(acl.rt.notify_get_export_key(n, 65, 1),
                         ("", acl.ACL_ERROR_INVALID_PARAM))
        key, ret = acl.rt.notify_get_export_key(n, 65, 0)
        self.assertEqual(ret, 0)
        self.assertIsInstance(key, str)
        self.assertTrue(0 < len(key) < 65, key)
        # A len far above what a key needs is fine.
        self.assertEqual(acl.rt.notify_get_export_key(n, 1 << 20, 0), (key, 0))
        self.assertEqual(acl.rt.notify_set_import_pid(n, []),
                         acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.notify_set_import_pid(n, [os.getpid()]), 0)
        self.assertEqual(acl.rt.notify_set_import_pid(n, tuple(range(1000, 1063))), 0)
        self.assertEqual(acl.rt.notify_set_import_pid(n, [4242]),
                         acl.ACL_ERROR_RT_OVER_LIMIT)
        # Imported in the process that made it: its own notify, by key.
        imp, ret = acl.rt.notify_import_by_key(key, 0)
        self.assertEqual(ret, 0)
        self.assertNotIn(imp, (0, n))
        self.assertEqual(acl.rt.notify_set_import_pid(imp, [1]),
                         acl.ACL_ERROR_RT_PARAM_INVALID)
        s = self.stream()
        self.assertEqual(acl.rt.record_notify(imp, s), 0)
        self.assertEqual(acl.rt.wait_and_reset_notify(n, s, LONG * 1000), 0)
        self.assertEqual(acl.rt.synchronize_stream(s), 0)
        self.assertEqual(acl.rt.destroy_notify(imp), 0)
        self.assertEqual(acl.rt.notify_import_by_key("aclmem:nonsense", 0),
                         (0, acl.ACL_ERROR_RT_PARAM_INVALID))

    def test_notify_between_processes(self):
        n = self.notify()
        self.addCleanup(acl.rt.destroy_notify, n)
        key, ret = acl.rt.notify_get_export_key(
            n, 65, acl.ACL_RT_NOTIFY_EXPORT_FLAG_DEFAULT)
        self.assertEqual(ret, 0)
        stream = self.stream()
        buf = self.malloc(4096)
        self.assertEqual(acl.rt.wait_and_reset_notify(n, stream, LONG * 1000), 0)
        self.assertEqual(acl.rt.memset_async(buf, 4096, 0x5A, 4096, stream), 0)

        def importer():
            return subprocess.Popen([sys.executable, "-c", IMPORTER], env=ENV,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)

        # A process the exporter did not name may not import.
        p = importer()
        out, err = p.communicate(key + "\n", timeout=120)
        self.assertEqual((p.returncode, out), (0, "import 207006\n"), err)
        self.assert_waiting(stream, buf, 4096)
        # Named, it imports and its record releases this stream.
        p = importer()
        self.assertEqual(acl.rt.notify_set_import_pid(n, [p.pid]), 0)
        self.assert_waiting(stream, buf, 4096)
        out, err = p.communicate(key + "\n", timeout=120)
        self.assertEqual((p.returncode, out), (0, "import 0\n"), err)
        self.assertEqual(acl.rt.synchronize_stream(stream), 0)
        self.assertEqual(acl.util.ptr_to_bytes(buf, 4096), b"\x5a" * 4096)

    # ---- IPC events and timed waits ----

    def test_ipc_event_handle(self):
        e, ret = acl.rt.create_event_ex_with_flag(acl.ACL_EVENT_IPC)
        self.assertEqual(ret, 0)
        self.addCleanup(acl.rt.destroy_event, e)
        h, ret = acl.rt.ipc_get_event_handle(e)
        self.assertEqual(ret, 0)
        self.assertIsInstance(h, bytes)
        self.assertEqual(len(h), acl.ACL_IPC_EVENT_HANDLE_SIZE)
        plain, ret = acl.rt.create_event()
        self.assertEqual(ret, 0)
        self.addCleanup(acl.rt.destroy_event, plain)
        self.assertEqual(acl.rt.ipc_get_event_handle(plain),
                         (b"", acl.ACL_ERROR_RT_PARAM_INVALID))
        self.assertEqual(acl.rt.ipc_open_event_handle(b"x" * 64),
                         (0, acl.ACL_ERROR_RT_PARAM_INVALID))
        self.assertEqual(acl.rt.ipc_open_event_handle(b"not a handle"),
                         (0, acl.ACL_ERROR_RT_PARAM_INVALID))
        # Trailing zero bytes may be dropped: the struct is zero-padded.
        opened, ret = acl.rt.ipc_open_event_handle(h.rstrip(b"\0"))
        self.assertEqual(ret, 0)
        self.assertNotIn(opened, (0, e))
        self.addCleanup(acl.rt.destroy_event, opened)
        recorder, waiter = self.stream(), self.stream()
        buf = self.malloc(4096)
        gate = self.blocker(recorder)
        self.assertEqual(acl.rt.record_event(e, recorder), 0)
        self.assertEqual(acl.rt.stream_wait_event(waiter, opened), 0)
        self.assertEqual(acl.rt.memset_async(buf, 4096, 7, 4096, waiter), 0)
        self.assert_waiting(waiter, buf, 4096)
        gate.set()
        self.assertEqual(acl.rt.synchronize_stream(waiter), 0)
        self.assertEqual(acl.util.ptr_to_bytes(buf, 4096), b"\x07" * 4096)

    def test_stream_wait_event_with_timeout(self):
        e, ret = acl.rt.create_event()
        self.assertEqual(ret, 0)
        self.addCleanup(acl.rt.destroy_event, e)
        recorder, waiter = self.stream(), self.stream()
        self.assertEqual(acl.rt.stream_wait_event_with_timeout(waiter, e, 0),
                         acl.ACL_ERROR_INVALID_PARAM)
        gate = self.blocker(recorder)
        self.assertEqual(acl.rt.record_event(e, recorder), 0)
        self.assertEqual(acl.rt.stream_wait_event_with_timeout(waiter, e, 100), 0)
        self.assertEqual(acl.rt.synchronize_stream(waiter),
                         acl.ACL_ERROR_RT_WAIT_TIMEOUT)
        self.assertEqual(acl.rt.stream_wait_event_with_timeout(waiter, e, LONG * 1000), 0)
        gate.set()
        self.assertEqual(acl.rt.synchronize_stream(waiter), 0)

    # ---- values ----

    def test_value_write_and_wait(self):
        writer, waiter = self.stream(), self.stream()
        buf = self.malloc(4096)
        self.assertEqual(acl.rt.value_wait(buf, 5, acl.ACL_STREAM_WAIT_VALUE_EQ, waiter), 0)
        self.assertEqual(acl.rt.memset_async(buf + 64, 64, 1, 64, waiter), 0)
        self.assert_waiting(waiter, buf + 64, 64)
        self.assertEqual(acl.rt.value_write(buf, 5, 0, writer), 0)
        self.assertEqual(acl.rt.synchronize_stream(waiter), 0)
        self.assertEqual(int.from_bytes(acl.util.ptr_to_bytes(buf, 8), sys.byteorder), 5)
        self.assertEqual(acl.util.ptr_to_bytes(buf + 64, 64), b"\x01" * 64)
        self.assertEqual(acl.rt.value_write(buf + 4, 1, 0, writer),
                         acl.ACL_ERROR_RT_ADDR_UNALIGNED)
        self.assertEqual(acl.rt.value_wait(buf, 1, 4, waiter), acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.value_write(buf, 1, 1, writer), acl.ACL_ERROR_INVALID_PARAM)

    # ---- settings that need a context ----

    def test_context_settings(self):
        self.assertEqual(acl.rt.ctx_get_sys_param_opt(acl.ACL_OPT_DETERMINISTIC),
                         (0, acl.ACL_ERROR_RT_SYSPARAMOPT_NOT_SET))
        default_ctx, ret = acl.rt.get_context()
        self.assertEqual(ret, 0)
        ctx, ret = acl.rt.create_context(0)
        self.assertEqual(ret, 0)
        try:
            self.assertEqual(acl.rt.ctx_set_sys_param_opt(acl.ACL_OPT_DETERMINISTIC, 1), 0)
            self.assertEqual(acl.rt.ctx_get_sys_param_opt(acl.ACL_OPT_DETERMINISTIC), (1, 0))
            self.assertEqual(acl.rt.ctx_set_sys_param_opt(5, 1), acl.ACL_ERROR_INVALID_PARAM)
        finally:
            self.assertEqual(acl.rt.destroy_context(ctx), 0)
            self.assertEqual(acl.rt.set_context(default_ctx), 0)
        # The other context's option stays with it.
        self.assertEqual(acl.rt.ctx_get_sys_param_opt(acl.ACL_OPT_DETERMINISTIC),
                         (0, acl.ACL_ERROR_RT_SYSPARAMOPT_NOT_SET))
        self.assertEqual(acl.rt.set_device_sat_mode(acl.ACL_RT_OVERFLOW_MODE_INFNAN), 0)
        self.assertEqual(acl.rt.get_device_sat_mode(), (acl.ACL_RT_OVERFLOW_MODE_INFNAN, 0))
        self.assertEqual(acl.rt.set_device_sat_mode(acl.ACL_RT_OVERFLOW_MODE_SATURATION), 0)
        self.assertEqual(acl.rt.get_device_sat_mode(), (acl.ACL_RT_OVERFLOW_MODE_SATURATION, 0))
        self.assertEqual(acl.rt.set_device_sat_mode(acl.ACL_RT_OVERFLOW_MODE_UNDEF),
                         acl.ACL_ERROR_INVALID_PARAM)


if __name__ == "__main__":
    unittest.main()
