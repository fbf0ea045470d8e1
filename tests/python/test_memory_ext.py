# SPDX-License-Identifier: MIT
"""acl.rt's further memory calls (lib/python/memory_ext.c).

2D copies, 32-bit fills, configured allocations, DevSync frees, address
ranges, usage, memory types and granularity; and acl.rt.memset on host
memory.  Outputs first, ret last, as pyACL.  The device tests skip where
the npu_mem module is not loaded; the rest run anywhere.

    PYTHONPATH=build/python python3 -m unittest tests/python/test_memory_ext.py -v
"""
import ctypes
import os
import struct
import sys
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "build", "python"))

import acl  # noqa: E402

DEVICE = os.environ.get("NPU_MEM_DEVICE") or "/dev/npu-mem"
HAVE_DEVICE = os.path.exists(DEVICE) or os.path.exists("/sys/module/npu_mem")
MiB = 1 << 20

rt = acl.rt
OK = acl.ACL_SUCCESS
EINVAL = acl.ACL_ERROR_INVALID_PARAM            # 100000
EPARAM = acl.ACL_ERROR_RT_PARAM_INVALID         # 107000
EDEVID = acl.ACL_ERROR_RT_INVALID_DEVICEID      # 107001
# An id that names no device: the module's device count (several NPUs in
# the multi-device guest), 1 where it cannot be asked.
NO_DEV = acl.rt.get_device_count()[0] or 1


def prop(mem_attr, loc_type=None, loc_id=0):
    """An aclrtPhysicalMemProp dict as pyACL documents it."""
    if loc_type is None:
        loc_type = acl.ACL_MEM_LOCATION_TYPE_DEVICE
    return {"handleType": acl.ACL_MEM_HANDLE_TYPE_NONE,
            "allocationType": acl.ACL_MEM_ALLOCATION_TYPE_PINNED,
            "memAttr": mem_attr,
            "location": {"id": loc_id, "type": loc_type},
            "reserve": 0}


def cfg(*attrs):
    """An aclrtMallocConfig dict: attrs are (attr, member, value)."""
    lst = [{"attr": a, "value": {m: v}} for a, m, v in attrs]
    return {"attrs": lst, "numAttrs": len(lst)}


class NoDevice(unittest.TestCase):
    """What the library decides before it needs a device."""

    def test_constants(self):
        self.assertEqual(acl.ACL_RT_MEM_ATTR_RSV, 0)
        self.assertEqual(acl.ACL_RT_MEM_ATTR_MODULE_ID, 1)
        self.assertEqual(acl.ACL_RT_MEM_ATTR_DEVICE_ID, 2)
        self.assertEqual(acl.ACL_RT_MEM_ATTR_VA_FLAG, 3)
        self.assertEqual(acl.ACL_MEM_HANDLE_TYPE_NONE, 0)
        self.assertEqual(acl.ACL_MEM_HANDLE_TYPE_POSIX, 2)
        self.assertEqual(acl.ACL_MEM_ALLOCATION_TYPE_PINNED, 0)
        self.assertEqual(acl.ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, 0)
        self.assertEqual(acl.ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, 1)
        self.assertEqual(acl.ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF, 0xFFFF)
        self.assertEqual(acl.ACL_RT_MEM_TYPE_DEV, 0x2)
        self.assertEqual(acl.ACL_RT_MEM_TYPE_DVPP, 0x8)
        self.assertEqual(acl.ACL_RT_MEM_TYPE_RSVD, 0x10)
        self.assertEqual(acl.ACL_MEM_LOCATION_TYPE_MANAGED, 3)
        self.assertEqual(acl.ACL_MEM_LOCATION_TYPE_HOST_NUMA, 4)
        self.assertEqual(rt.ACL_RT_MEM_TYPE_DEV, 0x2)

    def test_argument_errors_raise(self):
        calls = [
            (TypeError, rt.memcpy2d, (0, 8, 0, 8, 8, 1, "1")),
            (TypeError, rt.memcpy2d_async, (0, 8, 0, 8, 8, 1, 1, None)),
            (TypeError, rt.memset_d32, (0, 8, 1.0, 2)),
            (OverflowError, rt.memset_d32, (0, 8, 1 << 32, 2)),
            (OverflowError, rt.memset_d32, (0, 8, -1, 2)),
            (TypeError, rt.memset_d32_async, (0, 8, 1, 2, "s")),
            (TypeError, rt.free_with_dev_sync, (None,)),
            (TypeError, rt.free_host_with_dev_sync, ("1",)),
            (TypeError, rt.mem_get_address_range, (1.0,)),
            (TypeError, rt.get_mem_usage_info, (0, "4")),
            (TypeError, rt.check_mem_type, (4096, 2)),
            (TypeError, rt.check_mem_type, (["4096"], 2)),
            (TypeError, rt.malloc_with_cfg, (64, 0, [])),
            (TypeError, rt.malloc_host_with_cfg, (64, "cfg")),
            (TypeError, rt.malloc_host_with_cfg, (64.0, {})),
            # aclrtMallocConfig: the attribute list and its count agree.
            (KeyError, rt.malloc_with_cfg, (64, 0, {"numAttrs": 1})),
            (ValueError, rt.malloc_with_cfg,
             (64, 0, {"attrs": [], "numAttrs": 1})),
            (TypeError, rt.malloc_with_cfg, (64, 0, {"attrs": [1]})),
            (KeyError, rt.malloc_with_cfg, (64, 0, {"attrs": [{"attr": 1}]})),
            # aclrtMallocAttrValue: one known member, in range.
            (KeyError, rt.malloc_with_cfg,
             (64, 0, {"attrs": [{"attr": 1, "value": {"module": 1}}]})),
            (KeyError, rt.malloc_with_cfg,
             (64, 0, {"attrs": [{"attr": 1, "value": {}}]})),
            (ValueError, rt.malloc_with_cfg,
             (64, 0, {"attrs": [{"attr": 1,
                                 "value": {"moduleId": 1, "deviceId": 0}}]})),
            (OverflowError, rt.malloc_with_cfg,
             (64, 0, cfg((acl.ACL_RT_MEM_ATTR_MODULE_ID, "moduleId", 1 << 16)))),
            (ValueError, rt.malloc_with_cfg,
             (64, 0, cfg((acl.ACL_RT_MEM_ATTR_RSV, "rsv", [0] * 9)))),
            # aclrtPhysicalMemProp: memAttr and location are required.
            (TypeError, rt.mem_get_allocation_granularity, (None, 0)),
            (KeyError, rt.mem_get_allocation_granularity,
             ({"location": {"id": 0, "type": 1}}, 0)),
            (KeyError, rt.mem_get_allocation_granularity,
             ({"memAttr": acl.ACL_MEM_HUGE}, 0)),
            (KeyError, rt.mem_get_allocation_granularity,
             ({"memAttr": acl.ACL_MEM_HUGE, "location": {"id": 0}}, 0)),
            (TypeError, rt.mem_get_allocation_granularity,
             ({"memAttr": "huge", "location": {"id": 0, "type": 1}}, 0)),
        ]
        for exc, fn, args in calls:
            with self.subTest(fn=fn.__name__, args=args):
                with self.assertRaises(exc):
                    fn(*args)

    def test_granularity(self):
        dev, host = (acl.ACL_MEM_LOCATION_TYPE_DEVICE,
                     acl.ACL_MEM_LOCATION_TYPE_HOST)
        mn = acl.ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM
        rec = acl.ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED
        f = rt.mem_get_allocation_granularity
        self.assertEqual(f(prop(acl.ACL_MEM_HUGE), mn), (2 * MiB, OK))
        self.assertEqual(f(prop(acl.ACL_MEM_HUGE), rec), (2 * MiB, OK))
        self.assertEqual(f(prop(acl.ACL_MEM_NORMAL), mn), (4096, OK))
        self.assertEqual(f(prop(acl.ACL_HBM_MEM_HUGE1G), mn), (1 << 30, OK))
        self.assertEqual(f(prop(acl.ACL_DDR_MEM_HUGE, host), rec),
                         (2 * MiB, OK))
        # The optional members default to CANN's only values.
        self.assertEqual(f({"memAttr": acl.ACL_MEM_HUGE,
                            "location": {"id": 0, "type": dev}}, mn),
                         (2 * MiB, OK))
        # Documented failures: DDR kinds are host memory, an option out of
        # range, a device that does not exist.
        self.assertEqual(f(prop(acl.ACL_DDR_MEM_HUGE, dev), mn), (0, EINVAL))
        self.assertEqual(f(prop(acl.ACL_MEM_HUGE),
                           acl.ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF), (0, EINVAL))
        self.assertEqual(f(prop(acl.ACL_MEM_HUGE, dev, NO_DEV), mn),
                         (0, EDEVID))

    def test_early_failures(self):
        # Empty copies and fills succeed before anything is checked.
        self.assertEqual(rt.memcpy2d(0, 8, 0, 8, 0, 4, 99), OK)
        self.assertEqual(rt.memcpy2d_async(0, 8, 0, 8, 8, 0, 99, 0), OK)
        self.assertEqual(rt.memset_d32(0, 0, 7, 0), OK)
        self.assertEqual(rt.memset_d32_async(0, 0, 7, 0, 0), OK)
        # NULL pointers.
        self.assertEqual(rt.memcpy2d(0, 8, 0, 8, 8, 1,
                                     acl.ACL_MEMCPY_HOST_TO_DEVICE), EINVAL)
        self.assertEqual(rt.memset_d32(0, 8, 7, 2), EINVAL)
        self.assertEqual(rt.memset_d32_async(0, 8, 7, 2, 0), EINVAL)
        self.assertEqual(rt.free_with_dev_sync(0), EINVAL)
        self.assertEqual(rt.free_host_with_dev_sync(0), EINVAL)
        self.assertEqual(rt.mem_get_address_range(0), (0, 0, EINVAL))
        self.assertEqual(rt.check_mem_type([], acl.ACL_RT_MEM_TYPE_DEV),
                         (0, EINVAL))
        self.assertEqual(rt.check_mem_type([0], acl.ACL_RT_MEM_TYPE_DEV),
                         (0, EINVAL))
        self.assertEqual(rt.get_mem_usage_info(NO_DEV, 4), ([], EDEVID))


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

    def malloc(self, size, policy=None):
        if policy is None:
            policy = acl.ACL_MEM_MALLOC_NORMAL_ONLY
        ptr, ret = rt.malloc(size, policy)
        self.assertEqual(ret, OK)
        return ptr

    def stream(self):
        s, ret = rt.create_stream()
        self.assertEqual(ret, OK)
        self.addCleanup(rt.destroy_stream, s)
        return s

    # ---- 2D copies ----

    def test_memcpy2d_round_trip(self):
        # 16 rows of 100 bytes: source pitch 128, device pitch 256.
        rows, width, spitch, dpitch = 16, 100, 128, 256
        src = bytes(range(256)) * (rows * spitch // 256)
        dev = self.malloc(rows * dpitch)
        self.assertEqual(rt.memset(dev, rows * dpitch, 0xEE, rows * dpitch),
                         OK)
        self.assertEqual(rt.memcpy2d(dev, dpitch, acl.util.bytes_to_ptr(src),
                                     spitch, width, rows,
                                     acl.ACL_MEMCPY_HOST_TO_DEVICE), OK)
        got = acl.util.ptr_to_bytes(dev, rows * dpitch)
        for i in range(rows):
            self.assertEqual(got[i * dpitch:i * dpitch + width],
                             src[i * spitch:i * spitch + width])
            # Bytes between rows are not touched.
            self.assertEqual(got[i * dpitch + width:(i + 1) * dpitch],
                             b"\xee" * (dpitch - width))
        back = bytearray(rows * width)
        self.assertEqual(rt.memcpy2d(acl.util.bytes_to_ptr(back), width, dev,
                                     dpitch, width, rows,
                                     acl.ACL_MEMCPY_DEVICE_TO_HOST), OK)
        self.assertEqual(bytes(back),
                         b"".join(src[i * spitch:i * spitch + width]
                                  for i in range(rows)))
        # Documented: width wider than a pitch is 100000; a row past the
        # device buffer is 107000.
        self.assertEqual(rt.memcpy2d(dev, 64, acl.util.bytes_to_ptr(src), 128,
                                     100, 1, acl.ACL_MEMCPY_HOST_TO_DEVICE),
                         EINVAL)
        self.assertEqual(rt.memcpy2d(dev, dpitch, acl.util.bytes_to_ptr(src),
                                     spitch, width, rows + 1,
                                     acl.ACL_MEMCPY_HOST_TO_DEVICE), EPARAM)
        self.assertEqual(rt.free(dev), OK)

    def test_memcpy2d_async(self):
        rows, width, pitch = 8, 48, 64
        src = os.urandom(rows * pitch)
        dev = self.malloc(rows * pitch)
        s = self.stream()
        self.assertEqual(rt.memcpy2d_async(dev, pitch,
                                           acl.util.bytes_to_ptr(src), pitch,
                                           width, rows,
                                           acl.ACL_MEMCPY_HOST_TO_DEVICE, s),
                         OK)
        self.assertEqual(rt.synchronize_stream(s), OK)
        got = acl.util.ptr_to_bytes(dev, rows * pitch)
        for i in range(rows):
            self.assertEqual(got[i * pitch:i * pitch + width],
                             src[i * pitch:i * pitch + width])
        # Documented limit: height at most 5 * 1024 * 1024.
        self.assertEqual(rt.memcpy2d_async(dev, pitch,
                                           acl.util.bytes_to_ptr(src), pitch,
                                           1, 5 * MiB + 1,
                                           acl.ACL_MEMCPY_HOST_TO_DEVICE, s),
                         EINVAL)
        self.assertEqual(rt.free(dev), OK)

    # ---- 32-bit fills ----

    def test_memset_d32(self):
        dev = self.malloc(4096)
        self.assertEqual(rt.memset(dev, 4096, 0, 4096), OK)
        self.assertEqual(rt.memset_d32(dev, 4096, 0xDEADBEEF, 1000), OK)
        got = acl.util.ptr_to_bytes(dev, 4096)
        self.assertEqual(got[:4000], struct.pack("<I", 0xDEADBEEF) * 1000)
        self.assertEqual(got[4000:], bytes(96))
        # Documented: unaligned pointer or N * 4 > memSize: 100000; past
        # the buffer's end: 107000.
        self.assertEqual(rt.memset_d32(dev + 2, 4096, 1, 4), EINVAL)
        self.assertEqual(rt.memset_d32(dev, 15, 1, 4), EINVAL)
        self.assertEqual(rt.memset_d32(dev, 1 << 20, 1, 2000), EPARAM)
        self.assertEqual(rt.free(dev), OK)

    def test_memset_d32_async(self):
        dev = self.malloc(4096)
        host, ret = rt.malloc_host(4096)
        self.assertEqual(ret, OK)
        s = self.stream()
        self.assertEqual(rt.memset_d32_async(dev, 4096, 0x01020304, 1024, s),
                         OK)
        # Host memory is filled at once, not queued (CANN).
        self.assertEqual(rt.memset_d32_async(host, 4096, 0xA5A5A5A5, 8, s), OK)
        self.assertEqual(acl.util.ptr_to_bytes(host, 32), b"\xa5" * 32)
        self.assertEqual(rt.synchronize_stream(s), OK)
        self.assertEqual(acl.util.ptr_to_bytes(dev, 4096),
                         struct.pack("<I", 0x01020304) * 1024)
        # Documented: memory not from aclrtMalloc/aclrtMallocHost: 100000.
        plain = ctypes.create_string_buffer(64)
        self.assertEqual(rt.memset_d32_async(ctypes.addressof(plain), 64, 1,
                                             4, s), EINVAL)
        self.assertEqual(rt.free_host(host), OK)
        self.assertEqual(rt.free(dev), OK)

    # ---- configured allocations ----

    def test_malloc_with_cfg(self):
        for c in ({}, None,
                  cfg((acl.ACL_RT_MEM_ATTR_MODULE_ID, "moduleId", 33)),
                  cfg((acl.ACL_RT_MEM_ATTR_MODULE_ID, "moduleId", 33),
                      (acl.ACL_RT_MEM_ATTR_DEVICE_ID, "deviceId", 0))):
            with self.subTest(cfg=c):
                ptr, ret = rt.malloc_with_cfg(3 * MiB,
                                              acl.ACL_MEM_MALLOC_HUGE_FIRST, c)
                self.assertEqual(ret, OK)
                self.assertNotEqual(ptr, 0)
                self.assertEqual(ptr % 64, 0)
                attrs, ret = rt.pointer_get_attributes(ptr)
                self.assertEqual(attrs["type"],
                                 acl.ACL_MEM_LOCATION_TYPE_DEVICE)
                self.assertEqual(rt.memset(ptr, 3 * MiB, 1, 3 * MiB), OK)
                self.assertEqual(rt.free(ptr), OK)
        # Documented: another device: 107001; a reserved attribute: 100000.
        self.assertEqual(rt.malloc_with_cfg(
            64, 0, cfg((acl.ACL_RT_MEM_ATTR_DEVICE_ID, "deviceId", NO_DEV))),
            (0, EDEVID))
        self.assertEqual(rt.malloc_with_cfg(
            64, 0, cfg((acl.ACL_RT_MEM_ATTR_RSV, "rsv", [0] * 8))),
            (0, EINVAL))
        self.assertEqual(rt.malloc_with_cfg(0, 0, {}), (0, EINVAL))

    def test_malloc_host_with_cfg(self):
        for c in ({}, cfg((acl.ACL_RT_MEM_ATTR_VA_FLAG, "vaFlag", 1))):
            with self.subTest(cfg=c):
                ptr, ret = rt.malloc_host_with_cfg(10000, c)
                self.assertEqual(ret, OK)
                self.assertNotEqual(ptr, 0)
                attrs, ret = rt.pointer_get_attributes(ptr)
                self.assertEqual(attrs["type"], acl.ACL_MEM_LOCATION_TYPE_HOST)
                self.assertEqual(rt.free_host(ptr), OK)
        self.assertEqual(rt.malloc_host_with_cfg(
            64, cfg((acl.ACL_RT_MEM_ATTR_VA_FLAG, "vaFlag", 2))), (0, EINVAL))

    # ---- frees that wait for the device ----

    def test_free_with_dev_sync_waits(self):
        # A copy still queued when the buffer is freed has run by the time
        # free_with_dev_sync returns: no synchronize_stream is called.
        size = 16 * MiB
        dev = self.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        host, ret = rt.malloc_host(size)
        self.assertEqual(ret, OK)
        self.assertEqual(rt.memset(dev, size, 0x3C, size), OK)
        self.assertEqual(rt.memset(host, size, 0, size), OK)
        s = self.stream()
        for _ in range(4):
            self.assertEqual(rt.memcpy_async(host, size, dev, size,
                                             acl.ACL_MEMCPY_DEVICE_TO_HOST, s),
                             OK)
        self.assertEqual(rt.free_with_dev_sync(dev), OK)
        self.assertEqual(acl.util.ptr_to_bytes(host + size - 16, 16),
                         b"\x3c" * 16)
        # Documented: freed already, or host memory: 107000.
        self.assertEqual(rt.free_with_dev_sync(dev), EPARAM)
        self.assertEqual(rt.free_with_dev_sync(host), EPARAM)
        self.assertEqual(rt.free_host_with_dev_sync(host), OK)
        self.assertEqual(rt.free_host_with_dev_sync(host), EPARAM)

    def test_free_host_with_dev_sync_waits(self):
        size = 16 * MiB
        dev = self.malloc(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        host, ret = rt.malloc_host(size)
        self.assertEqual(ret, OK)
        self.assertEqual(rt.memset(host, size, 0x77, size), OK)
        self.assertEqual(rt.memset(dev, size, 0, size), OK)
        s = self.stream()
        for _ in range(4):
            self.assertEqual(rt.memcpy_async(dev, size, host, size,
                                             acl.ACL_MEMCPY_HOST_TO_DEVICE, s),
                             OK)
        self.assertEqual(rt.free_host_with_dev_sync(host), OK)
        self.assertEqual(acl.util.ptr_to_bytes(dev + size - 16, 16),
                         b"\x77" * 16)
        self.assertEqual(rt.synchronize_stream(s), OK)
        self.assertEqual(rt.free_host_with_dev_sync(dev), EPARAM)
        self.assertEqual(rt.free(dev), OK)

    # ---- queries ----

    def test_mem_get_address_range(self):
        dev = self.malloc(1000)
        # aclrtMalloc reserves ALIGN_UP(size, 32) + 32.
        self.assertEqual(rt.mem_get_address_range(dev), (dev, 1056, OK))
        self.assertEqual(rt.mem_get_address_range(dev + 1055), (dev, 1056, OK))
        host, ret = rt.malloc_host(5000)
        self.assertEqual(ret, OK)
        base, size, ret = rt.mem_get_address_range(host + 4999)
        self.assertEqual((base, ret), (host, OK))
        self.assertGreaterEqual(size, 5000)
        self.assertEqual(rt.free_host(host), OK)
        self.assertEqual(rt.free(dev), OK)
        # Documented: an address no ACL buffer holds: 107000.
        self.assertEqual(rt.mem_get_address_range(dev), (0, 0, EPARAM))

    def test_get_mem_usage_info(self):
        dev = self.malloc(8 * MiB, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        infos, ret = rt.get_mem_usage_info(0, 8)
        self.assertEqual(ret, OK)
        self.assertEqual(sorted(i["name"] for i in infos), ["APP", "RUNTIME"])
        for i in infos:
            self.assertEqual(set(i), {"name", "curMemSize", "memPeakSize",
                                      "reserved"})
            self.assertLessEqual(i["curMemSize"], i["memPeakSize"])
            self.assertEqual(i["reserved"], [0] * 8)
        app = next(i for i in infos if i["name"] == "APP")
        self.assertGreaterEqual(app["curMemSize"], 8 * MiB)
        # Largest current use first.
        self.assertGreaterEqual(infos[0]["curMemSize"], infos[1]["curMemSize"])
        one, ret = rt.get_mem_usage_info(0, 1)
        self.assertEqual((len(one), ret), (1, OK))
        self.assertEqual(one[0]["name"], infos[0]["name"])
        self.assertEqual(rt.get_mem_usage_info(0, 0), ([], OK))
        self.assertEqual(rt.free(dev), OK)

    def test_check_mem_type(self):
        dev = self.malloc(4096)
        dev2 = self.malloc(4096)
        host, ret = rt.malloc_host(4096)
        self.assertEqual(ret, OK)
        DEV = acl.ACL_RT_MEM_TYPE_DEV
        self.assertEqual(rt.check_mem_type([dev, dev2 + 8], DEV), (1, OK))
        self.assertEqual(rt.check_mem_type((dev,), DEV, 0), (1, OK))
        self.assertEqual(rt.check_mem_type([dev, host], DEV), (0, OK))
        # aclrtMalloc's memory is not DVPP memory (acldvppMalloc's is).
        self.assertEqual(rt.check_mem_type([dev], acl.ACL_RT_MEM_TYPE_DVPP),
                         (0, OK))
        # Documented: reserve must be 0, memType only the known bits.
        self.assertEqual(rt.check_mem_type([dev], DEV, 1), (0, EINVAL))
        self.assertEqual(rt.check_mem_type([dev], 0x1), (0, EINVAL))
        self.assertEqual(rt.free_host(host), OK)
        self.assertEqual(rt.free(dev2), OK)
        self.assertEqual(rt.free(dev), OK)

    # ---- acl.rt.memset on host memory ----

    def test_memset_host_memory(self):
        host, ret = rt.malloc_host(8192)
        self.assertEqual(ret, OK)
        self.assertEqual(rt.memset(host, 8192, 0x5A, 8192), OK)
        self.assertEqual(acl.util.ptr_to_bytes(host, 8192), b"\x5a" * 8192)
        self.assertEqual(rt.free_host(host), OK)
        # Ordinary host memory: the address decides, as CANN documents.
        buf = bytearray(1000)
        self.assertEqual(rt.memset(acl.util.bytes_to_ptr(buf), 1000, 0x11,
                                   999), OK)
        self.assertEqual(bytes(buf), b"\x11" * 999 + b"\x00")
        # count > max_count: 107000, nothing written.
        self.assertEqual(rt.memset(acl.util.bytes_to_ptr(buf), 10, 0x22, 11),
                         EPARAM)
        self.assertEqual(buf[0], 0x11)


if __name__ == "__main__":
    unittest.main()
