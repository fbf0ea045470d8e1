# SPDX-License-Identifier: MIT
"""acl.media's memory (dvpp_malloc, dvpp_free), the overflow status
(acl.rt.get_overflow_status, reset_overflow_status), the thread's last
task id and the vector cores a device resource limit may use.

pyACL's names and outputs: dev_ptr, ret = acl.media.dvpp_malloc(size).
Tests that need /dev/npu-mem are skipped where the npu_mem module is not
loaded.

    PYTHONPATH=build/python python3 -m unittest -v tests/python/test_media_status.py
"""
import os
import sys
import threading
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "build", "python"))

import acl  # noqa: E402

DEVICE = os.environ.get("NPU_MEM_DEVICE") or "/dev/npu-mem"
HAVE_DEVICE = os.path.exists(DEVICE) or os.path.exists("/sys/module/npu_mem")
OK = acl.ACL_SUCCESS
EINVAL = acl.ACL_ERROR_INVALID_PARAM
RT_EINVAL = acl.ACL_ERROR_RT_PARAM_INVALID
STATUS = 64
LONG = 120


class Arguments(unittest.TestCase):
    def test_types(self):
        for fn, args in ((acl.media.dvpp_malloc, ("64",)),
                         (acl.media.dvpp_free, (None,)),
                         (acl.rt.get_overflow_status, (1, "64", 0)),
                         (acl.rt.reset_overflow_status, ("s",))):
            with self.subTest(fn=fn.__name__):
                self.assertRaises(TypeError, fn, *args)
        self.assertRaises(OverflowError, acl.media.dvpp_malloc, -1)
        self.assertRaises(TypeError, acl.rt.get_thread_last_task_id, 1)


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

    def stream(self):
        s, ret = acl.rt.create_stream()
        self.assertEqual(ret, OK)
        self.addCleanup(acl.rt.destroy_stream, s)
        return s

    def blocker(self, stream):
        """Hold a stream's worker in a host function until gate is set."""
        gate = threading.Event()
        started = threading.Event()

        def hold(_):
            started.set()
            gate.wait(LONG)

        self.assertEqual(acl.rt.launch_host_func(stream, hold, None), OK)
        self.assertTrue(started.wait(LONG))
        self.addCleanup(gate.set)
        return gate

    def test_dvpp_malloc_free(self):
        p, ret = acl.media.dvpp_malloc(100)
        self.assertEqual(ret, OK)
        self.assertNotEqual(p, 0)
        self.assertEqual(p % 128, 0)
        # ALIGN_UP(100, 32) + 32 reserved: device memory for copies.
        self.assertEqual(acl.rt.mem_get_address_range(p), (p, 160, OK))
        data = bytes(range(100))
        self.assertEqual(acl.rt.memcpy(p, 160, acl.util.bytes_to_ptr(data), 100,
                                       acl.ACL_MEMCPY_HOST_TO_DEVICE), OK)
        self.assertEqual(acl.util.ptr_to_bytes(p, 100), data)
        self.assertEqual(acl.rt.check_mem_type([p], acl.ACL_RT_MEM_TYPE_DVPP),
                         (1, OK))
        self.assertEqual(acl.rt.check_mem_type([p], acl.ACL_RT_MEM_TYPE_DEV),
                         (0, OK))
        # Only dvpp_free frees it, and it frees nothing else.
        self.assertEqual(acl.rt.free(p), RT_EINVAL)
        dev, ret = acl.rt.malloc(64, acl.ACL_MEM_MALLOC_NORMAL_ONLY)
        self.assertEqual(ret, OK)
        self.assertEqual(acl.media.dvpp_free(dev), RT_EINVAL)
        self.assertEqual(acl.rt.free(dev), OK)
        self.assertEqual(acl.media.dvpp_free(p), OK)
        self.assertEqual(acl.media.dvpp_free(p), RT_EINVAL)
        # Size 0 is CANN's 32 bytes; NULL and overflow are refused.
        p, ret = acl.media.dvpp_malloc(0)
        self.assertEqual(ret, OK)
        self.assertEqual(acl.rt.mem_get_address_range(p), (p, 32, OK))
        self.assertEqual(acl.media.dvpp_free(p), OK)
        self.assertEqual(acl.media.dvpp_malloc(2**64 - 1), (0, EINVAL))
        self.assertEqual(acl.media.dvpp_free(0), EINVAL)

    def test_overflow_status(self):
        s = self.stream()
        out, ret = acl.rt.malloc(STATUS, acl.ACL_MEM_MALLOC_NORMAL_ONLY)
        self.assertEqual(ret, OK)
        self.addCleanup(acl.rt.free, out)
        self.assertEqual(acl.rt.memset(out, STATUS, 0xff, STATUS), OK)
        gate = self.blocker(s)
        self.assertEqual(acl.rt.reset_overflow_status(s), OK)
        self.assertEqual(acl.rt.get_overflow_status(out, STATUS, s), OK)
        # In stream order: not written while the stream is held.
        self.assertEqual(acl.util.ptr_to_bytes(out, STATUS), b"\xff" * STATUS)
        gate.set()
        self.assertEqual(acl.rt.synchronize_stream(s), OK)
        self.assertEqual(acl.util.ptr_to_bytes(out, STATUS), bytes(STATUS))
        self.assertEqual(acl.rt.get_overflow_status(0, STATUS, s), EINVAL)
        self.assertEqual(acl.rt.get_overflow_status(out, 32, s), RT_EINVAL)
        self.assertEqual(acl.rt.get_overflow_status(out, STATUS + 1, s),
                         RT_EINVAL)
        host = bytearray(STATUS)
        self.assertEqual(acl.rt.get_overflow_status(
            acl.util.bytes_to_ptr(host), STATUS, s), RT_EINVAL)

    def test_thread_last_task_id(self):
        s = self.stream()
        out, ret = acl.rt.malloc(STATUS, acl.ACL_MEM_MALLOC_NORMAL_ONLY)
        self.assertEqual(ret, OK)
        self.addCleanup(acl.rt.free, out)
        for _ in range(3):
            self.assertEqual(acl.rt.memset_async(out, STATUS, 0, STATUS, s), OK)
        # A new stream's tasks are numbered from 0.
        self.assertEqual(acl.rt.get_thread_last_task_id(), (2, OK))
        self.assertEqual(acl.rt.memset_async(out, STATUS, 0, STATUS, 0), OK)
        self.assertEqual(acl.rt.get_thread_last_task_id(), (2, OK))
        self.assertEqual(acl.rt.synchronize_device(), OK)

    def test_vector_cores(self):
        ncpu = os.sysconf("SC_NPROCESSORS_ONLN")
        vector = acl.ACL_RT_DEV_RES_VECTOR_CORE
        self.addCleanup(acl.rt.reset_device_res_limit, 0)
        self.assertEqual(acl.rt.get_device_res_limit(0, vector), (ncpu, OK))
        self.assertEqual(acl.rt.set_device_res_limit(0, vector, 1), OK)
        self.assertEqual(acl.rt.get_device_res_limit(0, vector), (1, OK))
        self.assertEqual(acl.rt.set_device_res_limit(0, vector, ncpu + 1),
                         EINVAL)
        self.assertEqual(acl.rt.reset_device_res_limit(0), OK)
        self.assertEqual(acl.rt.get_device_res_limit(0, vector), (ncpu, OK))
        self.assertEqual(acl.get_device_capability(
            0, acl.ACL_DEVICE_INFO_VECTOR_CORE_NUM), (ncpu, OK))


if __name__ == "__main__":
    unittest.main()
