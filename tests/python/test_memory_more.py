# SPDX-License-Identifier: MIT
"""acl.rt's batched copies and cache operations (lib/python/memory_more.c).

memcpy_batch*, memcpy_async_with_condition, cmo_*, device_l2_cache_flush:
outputs first, ret last.  The device tests skip where the npu_mem module is
not loaded; the rest run anywhere.

    PYTHONPATH=build/python python3 -m unittest tests/python/test_memory_more.py -v
"""
import os
import sys
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "build", "python"))

import acl  # noqa: E402

DEVICE = os.environ.get("NPU_MEM_DEVICE") or "/dev/npu-mem"
HAVE_DEVICE = os.path.exists(DEVICE) or os.path.exists("/sys/module/npu_mem")

rt = acl.rt
OK = acl.ACL_SUCCESS
EINVAL = acl.ACL_ERROR_INVALID_PARAM            # 100000
EPARAM = acl.ACL_ERROR_RT_PARAM_INVALID         # 107000
SIZE_MAX = (1 << 64) - 1 if sys.maxsize > 2 ** 32 else (1 << 32) - 1
HOST = {"id": 0, "type": acl.ACL_MEM_LOCATION_TYPE_HOST}
DEV = {"id": 0, "type": acl.ACL_MEM_LOCATION_TYPE_DEVICE}


def attr(src, dst):
    return {"srcLoc": src, "dstLoc": dst}


class NoDevice(unittest.TestCase):
    """What is decided before the library needs a device."""

    def test_constants(self):
        self.assertEqual(acl.ACL_RT_CMO_TYPE_PREFETCH, 0)
        self.assertEqual(acl.ACL_RT_CMO_TYPE_WRITEBACK, 1)
        self.assertEqual(acl.ACL_RT_CMO_TYPE_INVALID, 2)
        self.assertEqual(acl.ACL_RT_CMO_TYPE_FLUSH, 3)
        self.assertEqual(acl.ACL_RT_CMO_MAX_BARRIER_NUM, 6)

    def test_malformed_arguments_raise(self):
        with self.assertRaises(ValueError):    # lists of unequal length
            rt.memcpy_batch([1, 2], [1], [1, 2], [1, 2], [attr(HOST, DEV)],
                            [0])
        with self.assertRaises(ValueError):
            rt.memcpy_batch([1], [1], [1], [1], [attr(HOST, DEV)], [0, 1])
        with self.assertRaises(TypeError):
            rt.memcpy_batch([1], [1], [1], [1], [5], [0])
        with self.assertRaises(KeyError):
            rt.memcpy_batch([1], [1], [1], [1], [{"srcLoc": HOST}], [0])
        with self.assertRaises(TypeError):
            rt.memcpy_batch(["x"], [1], [1], [1], [attr(HOST, DEV)], [0])
        with self.assertRaises(ValueError):
            rt.cmo_wait_barrier([{"cmoType": 2, "barrierId": 1}] * 7, 0, 0)
        with self.assertRaises(KeyError):
            rt.cmo_wait_barrier([{"cmoType": 2}], 0, 0)

    def test_argument_rules(self):
        # Checked before the context: not one copy's error, SIZE_MAX.
        self.assertEqual(rt.memcpy_batch([], [], [], [], [], []),
                         (SIZE_MAX, EINVAL))
        self.assertEqual(rt.memcpy_batch_v2([1], [1], [1], [1],
                                            [attr(HOST, DEV)], [1]), EINVAL)
        self.assertEqual(rt.cmo_get_desc_size()[1], OK)
        self.assertEqual(rt.cmo_wait_barrier([], 0, 0), EINVAL)


@unittest.skipUnless(HAVE_DEVICE, f"{DEVICE} absent: npu_mem module not loaded")
class WithDevice(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ret = acl.init()
        assert ret in (acl.ACL_SUCCESS, acl.ACL_ERROR_REPEAT_INITIALIZE), ret
        assert rt.set_device(0) == acl.ACL_SUCCESS

    @classmethod
    def tearDownClass(cls):
        rt.reset_device(0)
        acl.finalize()

    def malloc(self, size):
        ptr, ret = rt.malloc(size, acl.ACL_MEM_MALLOC_NORMAL_ONLY)
        self.assertEqual(ret, OK)
        self.addCleanup(rt.free, ptr)
        return ptr

    def stream(self):
        s, ret = rt.create_stream()
        self.assertEqual(ret, OK)
        self.addCleanup(rt.destroy_stream, s)
        return s

    def test_memcpy_batch_round_trip(self):
        dev = self.malloc(4096)
        src = bytes(range(200))
        sp = acl.util.bytes_to_ptr(src)
        fail, ret = rt.memcpy_batch([dev, dev + 1000], [100, 100],
                                    [sp, sp + 100], [100, 100],
                                    [attr(HOST, DEV)], [0])
        self.assertEqual((fail, ret), (SIZE_MAX, OK))
        self.assertEqual(acl.util.ptr_to_bytes(dev, 100), src[:100])
        self.assertEqual(acl.util.ptr_to_bytes(dev + 1000, 100), src[100:])
        back = bytearray(200)
        bp = acl.util.bytes_to_ptr(back)
        s = self.stream()
        self.assertEqual(rt.memcpy_batch_async_v2(
            [bp, bp + 100], [100, 100], [dev, dev + 1000], [100, 100],
            [attr(DEV, HOST), attr(DEV, HOST)], [0, 1], s), OK)
        self.assertEqual(rt.synchronize_stream(s), OK)
        self.assertEqual(bytes(back), src)

    def test_memcpy_batch_fail_index(self):
        dev = self.malloc(4096)
        host = bytearray(64)
        hp = acl.util.bytes_to_ptr(host)
        s = self.stream()
        # Copy 1's attribute goes device to device: not allowed.
        fail, ret = rt.memcpy_batch_async(
            [dev, dev + 64], [64, 64], [hp, hp], [64, 64],
            [attr(HOST, DEV), attr(DEV, DEV)], [0, 1], s)
        self.assertEqual((fail, ret), (1, EINVAL))
        # Copy 1's destination is host memory, not the device's.
        fail, ret = rt.memcpy_batch([dev, hp], [64, 64], [hp, hp], [64, 64],
                                    [attr(HOST, DEV)], [0])
        self.assertEqual((fail, ret), (1, EPARAM))
        # attrs_indexes must start at 0.
        fail, ret = rt.memcpy_batch([dev], [64], [hp], [64],
                                    [attr(HOST, DEV)], [1])
        self.assertEqual((fail, ret), (SIZE_MAX, EINVAL))

    def test_memcpy_async_with_condition(self):
        dev = self.malloc(4096)
        s = self.stream()
        src = b"\x5a" * 64
        self.assertEqual(rt.memcpy_async_with_condition(
            dev, 4096, acl.util.bytes_to_ptr(src), 64,
            acl.ACL_MEMCPY_HOST_TO_DEVICE, s), OK)
        # Unpinned host memory: the copy is made when the call returns.
        self.assertEqual(acl.util.ptr_to_bytes(dev, 64), src)
        self.assertEqual(rt.memcpy_async_with_condition(
            0, 4096, acl.util.bytes_to_ptr(src), 64,
            acl.ACL_MEMCPY_HOST_TO_DEVICE, s), EINVAL)
        self.assertEqual(rt.synchronize_stream(s), OK)

    def test_cmo(self):
        dev = self.malloc(4096)
        s = self.stream()
        for t in (acl.ACL_RT_CMO_TYPE_PREFETCH, acl.ACL_RT_CMO_TYPE_WRITEBACK,
                  acl.ACL_RT_CMO_TYPE_INVALID, acl.ACL_RT_CMO_TYPE_FLUSH):
            self.assertEqual(rt.cmo_async(dev, 4096, t, s), OK)
        self.assertEqual(rt.synchronize_stream(s), OK)
        self.assertEqual(rt.cmo_async(dev, 0, 0, s), EINVAL)
        self.assertEqual(rt.cmo_async(dev, 64, 4, s), EINVAL)
        host = bytearray(64)
        self.assertEqual(rt.cmo_async(acl.util.bytes_to_ptr(host), 64, 0, s),
                         EPARAM)
        self.assertEqual(rt.cmo_async_with_barrier(
            dev, 64, acl.ACL_RT_CMO_TYPE_INVALID, 3, s), OK)
        self.assertEqual(rt.cmo_async_with_barrier(
            dev, 64, acl.ACL_RT_CMO_TYPE_FLUSH, 3, s), EINVAL)
        self.assertEqual(rt.cmo_wait_barrier(
            [{"cmoType": acl.ACL_RT_CMO_TYPE_INVALID, "barrierId": 3}], s, 0),
            OK)
        self.assertEqual(rt.cmo_wait_barrier(
            [{"cmoType": acl.ACL_RT_CMO_TYPE_FLUSH, "barrierId": 3}], s, 0),
            EINVAL)
        self.assertEqual(rt.synchronize_stream(s), OK)

    def test_cmo_desc(self):
        dev = self.malloc(4096)
        s = self.stream()
        size, ret = rt.cmo_get_desc_size()
        self.assertEqual(ret, OK)
        self.assertGreater(size, 0)
        desc = dev + 2048
        self.assertEqual(rt.cmo_async_with_desc(desc, 0, s), EPARAM)
        self.assertEqual(rt.cmo_set_desc(desc, dev, 1024), OK)
        self.assertEqual(rt.cmo_async_with_desc(
            desc, acl.ACL_RT_CMO_TYPE_FLUSH, s), OK)
        self.assertEqual(rt.cmo_async_with_desc(0, 0, s), EINVAL)
        self.assertEqual(rt.synchronize_stream(s), OK)

    def test_device_l2_cache_flush(self):
        self.assertEqual(rt.device_l2_cache_flush(), OK)


if __name__ == "__main__":
    unittest.main()
