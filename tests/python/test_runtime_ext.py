# SPDX-License-Identifier: MIT
"""acl.rt notifies, IPC events, timed waits, values, settings, device ids,
and the device and stream controls (timed device sync, task abort, stream
stop, attributes, V2 creation, core limits), kernel binaries.

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
# An id that names no device: the module's device count (several NPUs in
# the multi-device guest), 1 where it cannot be asked.
NO_DEV = acl.rt.get_device_count()[0] or 1
# Generous: the guest runs under TCG, maybe under valgrind, maybe beside
# other guests.  Every wait with it ends as soon as its event happens.
LONG = 120


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
        self.assertEqual([acl.ACL_STREAM_ATTR_FAILURE_MODE,
                          acl.ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK,
                          acl.ACL_STREAM_ATTR_USER_CUSTOM_TAG,
                          acl.ACL_STREAM_ATTR_CACHE_OP_INFO,
                          acl.ACL_STREAM_ATTR_PRIORITY], [1, 2, 3, 4, 5])
        self.assertEqual(acl.ACL_ERROR_RT_TASK_ABORT_STOP, 107035)
        self.assertEqual(acl.rt.ACL_STREAM_ATTR_PRIORITY, 5)

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
            (acl.rt.synchronize_device_with_timeout, (None,)),
            (acl.rt.device_task_abort, (0, 1.0)),
            (acl.rt.stream_stop, ("s",)),
            (acl.rt.set_stream_overflow_switch, (0, None)),
            (acl.rt.get_stream_overflow_switch, (1.5,)),
            (acl.rt.set_stream_attribute, (0, 1, "1")),
            (acl.rt.set_stream_attribute, (0, 1, {"failureMode": "1"})),
            (acl.rt.get_stream_attribute, (0, None)),
            (acl.rt.create_stream_v2, (5,)),
            (acl.rt.create_stream_v2, ({"priority": "1"},)),
            (acl.rt.get_stream_res_limit, (0, "0")),
            (acl.rt.set_stream_res_limit, (0, 0, None)),
            (acl.rt.reset_stream_res_limit, (None,)),
            (acl.rt.use_stream_res_in_current_thread, ("0",)),
            (acl.rt.unuse_stream_res_in_current_thread, ("0",)),
            (acl.rt.get_res_in_current_thread, (None,)),
            (acl.rt.notify_batch_reset, (5,)),
            (acl.rt.notify_batch_reset, (["n"],)),
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
        overflow_errors = [
            (acl.rt.device_task_abort, (0, -1)),
            (acl.rt.set_stream_overflow_switch, (0, 1 << 32)),
            (acl.rt.set_stream_attribute, (0, 2, 1 << 32)),
            (acl.rt.set_stream_attribute, (0, 1, {"failureMode": 1 << 64})),
            (acl.rt.create_stream_v2, ({"priority": -1},)),
            (acl.rt.set_stream_res_limit, (0, 0, -1)),
            (acl.rt.notify_batch_reset, ([-1],)),
        ]
        for fn, args in overflow_errors:
            with self.subTest(fn=fn.__name__, args=args):
                with self.assertRaises(OverflowError):
                    fn(*args)
        # A dict without the member the attribute names; a key that is not
        # a configuration field.
        with self.assertRaises(KeyError):
            acl.rt.set_stream_attribute(0, acl.ACL_STREAM_ATTR_PRIORITY,
                                        {"failureMode": 1})
        with self.assertRaises(ValueError):
            acl.rt.create_stream_v2({"priority": 0, "workSize": 0})


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
            f"    eq(f({NO_DEV}), (0, 107001))\n"
            "    eq(f(-1), (0, 107001))\n"
            "eq(acl.rt.get_devices_topo(0, 0), (0, 100000))\n"
            f"eq(acl.rt.get_devices_topo(0, {NO_DEV}), (0, 107001))\n"
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
            "eq(acl.rt.synchronize_device_with_timeout(-1), 107002)\n"
            "eq(acl.rt.device_task_abort(0, 0), 107002)\n"
            "eq(acl.rt.device_task_abort(-1, 0), 107001)\n"
            "eq(acl.rt.stream_stop(0), 100000)\n"
            "eq(acl.rt.get_stream_available_num(), (2048, 0))\n"
            "eq(acl.rt.set_stream_overflow_switch(0, 1), 107002)\n"
            "eq(acl.rt.get_stream_overflow_switch(0), (0, 107002))\n"
            "eq(acl.rt.set_stream_attribute(0, 2, {'overflowSwitch': 1}), 107002)\n"
            "eq(acl.rt.get_stream_attribute(0, 2), ({}, 107002))\n"
            "eq(acl.rt.create_stream_v2(None), (0, 107002))\n"
            "eq(acl.rt.create_stream_v2({'flag': 1 << 32}), (0, 100000))\n"
            "eq(acl.rt.get_stream_res_limit(0, 0), (0, 107002))\n"
            "eq(acl.rt.set_stream_res_limit(0, 0, 0), 107002)\n"
            "eq(acl.rt.reset_stream_res_limit(0), 107002)\n"
            "eq(acl.rt.use_stream_res_in_current_thread(0), 107002)\n"
            "eq(acl.rt.unuse_stream_res_in_current_thread(0), 107002)\n"
            "eq(acl.rt.get_res_in_current_thread(0), (0, 107002))\n"
            "eq(acl.rt.get_res_in_current_thread(5), (0, 100000))\n"
            "eq(acl.rt.notify_batch_reset([]), 100000)\n"
            "eq(acl.rt.notify_batch_reset([0]), 100000)\n"
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

    # ---- kernel binaries ----

    def test_kernel_binary(self):
        """A kernel of tests/lib/binary/ loaded, packed and launched."""
        import ctypes
        path = os.path.join(TOP, "build", "tests", "ascendc-binary",
                            "libacl_binary_kernels.so")
        if not os.path.exists(path):
            self.skipTest(f"{path} not built")
        n, blocks = 4 * 64, 4
        rt = acl.rt
        b, ret = rt.binary_load_from_file(path, [{"type": 1, "value": 1}])
        self.assertEqual(ret, 0)
        self.addCleanup(rt.binary_unload, b)
        self.assertEqual(rt.binary_get_function(b, "none"), (0, 507027))
        f, ret = rt.binary_get_function(b, "axpy")
        self.assertEqual(ret, 0)
        x, y, z = (self.malloc(n * 4) for _ in range(3))
        host = (ctypes.c_float * n)(*[float(i % 50) for i in range(n)])
        for d in (x, y):
            self.assertEqual(rt.memcpy(d, n * 4, ctypes.addressof(host), n * 4,
                                       acl.ACL_MEMCPY_HOST_TO_DEVICE), 0)
        args, ret = rt.kernel_args_init(f)
        self.assertEqual(ret, 0)
        vals = [ctypes.c_uint64(x), ctypes.c_uint64(y), ctypes.c_uint64(z),
                ctypes.c_float(2.0), ctypes.c_uint32(n)]
        for v in vals:
            _, ret = rt.kernel_args_append(args, ctypes.addressof(v), ctypes.sizeof(v))
            self.assertEqual(ret, 0)
        self.assertEqual(rt.kernel_args_finalize(args), 0)
        s = self.stream()
        self.assertEqual(rt.launch_kernel_with_config(f, blocks, s, [{"id": 99, "value": 0}],
                                                      args, 0), 100000)
        self.assertEqual(rt.launch_kernel_with_config(f, blocks, s, [{"id": 1, "value": 0}],
                                                      args, 0), 0)
        self.assertEqual(rt.synchronize_stream(s), 0)
        out = (ctypes.c_float * n)()
        self.assertEqual(rt.memcpy(ctypes.addressof(out), n * 4, z, n * 4,
                                   acl.ACL_MEMCPY_DEVICE_TO_HOST), 0)
        self.assertEqual(list(out), [3.0 * (i % 50) for i in range(n)])

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


    # ---- device and stream controls ----

    def dead_stream(self):
        """A stream handle that was live and is destroyed."""
        s, ret = acl.rt.create_stream()
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.destroy_stream(s), 0)
        return s

    def test_synchronize_device_with_timeout(self):
        s = self.stream()
        gate = self.blocker(s)
        # One stream busy: a short wait gives up, 0 only checks.
        t0 = time.monotonic()
        self.assertEqual(acl.rt.synchronize_device_with_timeout(100),
                         acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)
        self.assertGreaterEqual(time.monotonic() - t0, 0.09)
        self.assertEqual(acl.rt.synchronize_device_with_timeout(0),
                         acl.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)
        # The GIL is released: the gate opens while we wait for ever.
        threading.Timer(0.1, gate.set).start()
        self.assertEqual(acl.rt.synchronize_device_with_timeout(-1), 0)
        self.assertEqual(acl.rt.stream_query(s), (acl.ACL_STREAM_STATUS_COMPLETE, 0))

    def test_stream_stop_drops_queued_work(self):
        s = self.stream()
        n = self.notify()
        self.addCleanup(acl.rt.destroy_notify, n)
        buf = self.malloc(4096)
        self.assertEqual(acl.rt.wait_and_reset_notify(n, s, LONG * 1000), 0)
        self.assertEqual(acl.rt.memset_async(buf, 4096, 9, 4096, s), 0)
        self.assert_waiting(s, buf, 4096)
        # The wait gives up and the memset is dropped, without a record.
        self.assertEqual(acl.rt.stream_stop(s), 0)
        self.assertEqual(acl.rt.synchronize_stream(s), 0)
        self.assertEqual(acl.util.ptr_to_bytes(buf, 4096), bytes(4096))
        # Still usable.
        self.assertEqual(acl.rt.memset_async(buf, 1, 5, 1, s), 0)
        self.assertEqual(acl.rt.synchronize_stream(s), 0)
        self.assertEqual(acl.util.ptr_to_bytes(buf, 2), b"\x05\x00")
        self.assertEqual(acl.rt.stream_stop(0), acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.stream_stop(self.dead_stream()),
                         acl.ACL_ERROR_RT_PARAM_INVALID)

    def test_device_task_abort(self):
        a, b = self.stream(), self.stream()
        n = self.notify()
        self.addCleanup(acl.rt.destroy_notify, n)
        buf = self.malloc(4096)
        for s in (a, b):
            self.assertEqual(acl.rt.wait_and_reset_notify(n, s, LONG * 1000), 0)
        self.assertEqual(acl.rt.memset_async(buf, 64, 1, 64, a), 0)
        self.assertEqual(acl.rt.memset_async(buf + 64, 64, 2, 64, b), 0)
        self.assert_waiting(a, buf, 128)
        # Every stream of the device gives up its waits and queued work.
        self.assertEqual(acl.rt.device_task_abort(0, 0), 0)
        self.assertEqual(acl.rt.synchronize_device_with_timeout(LONG * 1000), 0)
        self.assertEqual(acl.util.ptr_to_bytes(buf, 128), bytes(128))
        self.assertEqual(acl.rt.device_task_abort(-1, 0),
                         acl.ACL_ERROR_RT_INVALID_DEVICEID)

    def test_stream_available_num(self):
        before, ret = acl.rt.get_stream_available_num()
        self.assertEqual(ret, 0)
        self.assertGreater(before, 0)
        self.stream()
        self.assertEqual(acl.rt.get_stream_available_num(), (before - 1, 0))

    def test_overflow_switch(self):
        s = self.stream()
        self.assertEqual(acl.rt.get_stream_overflow_switch(s), (0, 0))
        self.assertEqual(acl.rt.set_stream_overflow_switch(s, 1), 0)
        self.assertEqual(acl.rt.get_stream_overflow_switch(s), (1, 0))
        # The same setting as the attribute.
        self.assertEqual(acl.rt.get_stream_attribute(
            s, acl.ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK), ({"overflowSwitch": 1}, 0))
        dead = self.dead_stream()
        self.assertEqual(acl.rt.set_stream_overflow_switch(dead, 1),
                         acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.get_stream_overflow_switch(dead),
                         (0, acl.ACL_ERROR_RT_PARAM_INVALID))

    def test_stream_attributes(self):
        s = self.stream()
        get = acl.rt.get_stream_attribute
        put = acl.rt.set_stream_attribute
        mode = acl.ACL_STREAM_ATTR_FAILURE_MODE
        self.assertEqual(get(s, mode), ({"failureMode": acl.ACL_CONTINUE_ON_FAILURE}, 0))
        self.assertEqual(put(s, mode, {"failureMode": acl.ACL_STOP_ON_FAILURE}), 0)
        self.assertEqual(get(s, mode), ({"failureMode": acl.ACL_STOP_ON_FAILURE}, 0))
        # A plain int is the member the attribute names; a dict from get
        # goes back as it is.
        self.assertEqual(put(s, mode, acl.ACL_CONTINUE_ON_FAILURE), 0)
        self.assertEqual(get(s, mode), ({"failureMode": 0}, 0))
        tag = acl.ACL_STREAM_ATTR_USER_CUSTOM_TAG
        self.assertEqual(put(s, tag, 0xFFFFFFFF), 0)
        value, ret = get(s, tag)
        self.assertEqual((value, ret), ({"userCustomTag": 0xFFFFFFFF}, 0))
        self.assertEqual(put(s, tag, {"userCustomTag": 7, "other": "ignored"}), 0)
        self.assertEqual(get(s, tag), ({"userCustomTag": 7}, 0))
        self.assertEqual(put(s, acl.ACL_STREAM_ATTR_CACHE_OP_INFO, 1), 0)
        self.assertEqual(get(s, acl.ACL_STREAM_ATTR_CACHE_OP_INFO),
                         ({"cacheOpInfoSwitch": 1}, 0))
        # Priority acts: the stream reports it.
        prio = acl.ACL_STREAM_ATTR_PRIORITY
        self.assertEqual(put(s, prio, {"streamPriority": 3}), 0)
        self.assertEqual(get(s, prio), ({"streamPriority": 3}, 0))
        self.assertEqual(acl.rt.stream_get_priority(s), (3, 0))
        self.assertEqual(put(s, prio, 8), acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(get(s, prio), ({"streamPriority": 3}, 0))
        # No such attribute; no failure mode on the default stream.
        self.assertEqual(get(s, 9), ({}, acl.ACL_ERROR_INVALID_PARAM))
        self.assertEqual(put(s, 9, 0), acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(put(s, 9, {}), acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(put(0, mode, acl.ACL_STOP_ON_FAILURE),
                         acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(get(self.dead_stream(), mode),
                         ({}, acl.ACL_ERROR_RT_PARAM_INVALID))

    def test_create_stream_v2(self):
        cases = [
            ({"priority": 3, "flag": acl.ACL_STREAM_FAST_LAUNCH}, 3,
             acl.ACL_STREAM_FAST_LAUNCH),
            ({"priority": 5}, 5, 0),
            ({}, 0, 0),
            (None, 0, 0),
        ]
        buf = self.malloc(4096)
        for config, prio, flags in cases:
            with self.subTest(config=config):
                s, ret = acl.rt.create_stream_v2(config)
                self.assertEqual(ret, 0)
                self.assertNotEqual(s, 0)
                try:
                    self.assertEqual(acl.rt.stream_get_priority(s), (prio, 0))
                    self.assertEqual(acl.rt.stream_get_flags(s), (flags, 0))
                    self.assertEqual(acl.rt.memset_async(buf, 16, prio + 1, 16, s), 0)
                    self.assertEqual(acl.rt.synchronize_stream(s), 0)
                    self.assertEqual(acl.util.ptr_to_bytes(buf, 16),
                                     bytes([prio + 1]) * 16)
                finally:
                    self.assertEqual(acl.rt.destroy_stream(s), 0)
        self.assertEqual(acl.rt.create_stream_v2({"flag": 1 << 32}),
                         (0, acl.ACL_ERROR_INVALID_PARAM))

    def test_core_limits(self):
        s = self.stream()
        cube, vector = acl.ACL_RT_DEV_RES_CUBE_CORE, acl.ACL_RT_DEV_RES_VECTOR_CORE
        # No cube cores: that limit is 0, 0 may be set, more is refused.
        # Vector cores are the CPUs online.
        ncpu = os.sysconf("SC_NPROCESSORS_ONLN")
        self.assertEqual(acl.rt.get_stream_res_limit(s, cube), (0, 0))
        self.assertEqual(acl.rt.get_stream_res_limit(0, vector), (ncpu, 0))
        self.assertEqual(acl.rt.set_stream_res_limit(s, vector, ncpu + 1),
                         acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.set_stream_res_limit(s, vector, 0), 0)
        self.assertEqual(acl.rt.set_stream_res_limit(s, cube, 1),
                         acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.get_stream_res_limit(s, 7), (0, acl.ACL_ERROR_INVALID_PARAM))
        self.assertEqual(acl.rt.reset_stream_res_limit(s), 0)
        self.assertEqual(acl.rt.use_stream_res_in_current_thread(s), 0)
        self.assertEqual(acl.rt.get_res_in_current_thread(cube), (0, 0))
        self.assertEqual(acl.rt.unuse_stream_res_in_current_thread(s), 0)
        self.assertEqual(acl.rt.get_res_in_current_thread(vector), (ncpu, 0))
        self.assertEqual(acl.rt.get_res_in_current_thread(2),
                         (0, acl.ACL_ERROR_INVALID_PARAM))
        dead = self.dead_stream()
        for fn in (acl.rt.reset_stream_res_limit,
                   acl.rt.use_stream_res_in_current_thread,
                   acl.rt.unuse_stream_res_in_current_thread):
            with self.subTest(fn=fn.__name__):
                self.assertEqual(fn(dead), acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.set_stream_res_limit(dead, cube, 0),
                         acl.ACL_ERROR_RT_PARAM_INVALID)

    def test_notify_batch_reset(self):
        n1, n2 = self.notify(), self.notify()
        self.addCleanup(acl.rt.destroy_notify, n1)
        self.addCleanup(acl.rt.destroy_notify, n2)
        s = self.stream()
        for n in (n1, n2):
            self.assertEqual(acl.rt.record_notify(n, s), 0)
        self.assertEqual(acl.rt.synchronize_stream(s), 0)
        # A bad handle in the list: none is cleared, so n1 is still set.
        self.assertEqual(acl.rt.notify_batch_reset([n1, 0]), acl.ACL_ERROR_INVALID_PARAM)
        dead = self.notify()
        self.assertEqual(acl.rt.destroy_notify(dead), 0)
        self.assertEqual(acl.rt.notify_batch_reset((n1, dead)),
                         acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.wait_and_reset_notify(n1, s, LONG * 1000), 0)
        self.assertEqual(acl.rt.synchronize_stream(s), 0)
        self.assertEqual(acl.rt.record_notify(n1, s), 0)
        self.assertEqual(acl.rt.synchronize_stream(s), 0)
        # Both cleared at once: waits on either time out.
        self.assertEqual(acl.rt.notify_batch_reset([n1, n2]), 0)
        for n in (n1, n2):
            with self.subTest(notify=n):
                self.assertEqual(acl.rt.wait_and_reset_notify(n, s, 100), 0)
                self.assertEqual(acl.rt.synchronize_stream(s),
                                 acl.ACL_ERROR_RT_WAIT_TIMEOUT)


if __name__ == "__main__":
    unittest.main()
