# SPDX-License-Identifier: MIT
"""acl's error, system and device-fact calls (lib/python/system.c).

Outputs first, ret last, as pyACL.  The device tests skip where the npu_mem
module is not loaded; the rest run anywhere.

    PYTHONPATH=build/python python3 -m unittest tests/python/test_system.py -v
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
# An id that names no device: the module's device count (several NPUs in
# the multi-device guest), 1 where it cannot be asked.
NO_DEV = acl.rt.get_device_count()[0] or 1


def clear_errors():
    acl.rt.get_last_error(acl.ACL_RT_THREAD_LEVEL)
    acl.get_recent_err_msg()


class NoDevice(unittest.TestCase):
    def setUp(self):
        clear_errors()

    def test_constants(self):
        self.assertEqual(acl.ACL_RT_THREAD_LEVEL, 0)
        self.assertEqual(acl.rt.ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, 301)
        self.assertEqual(acl.ACL_BF16, 27)
        self.assertEqual(acl.ACL_HIFLOAT4_SCALE, 43)
        self.assertEqual(acl.ACL_CANN_ATTR_JIT_COMPILE, 2)
        self.assertEqual(acl.ACL_RT_DEVICE_STATUS_ABNORMAL, 1)

    def test_last_error_and_message(self):
        self.assertIsNone(acl.get_recent_err_msg())
        value, ret = acl.rt.get_device_info(NO_DEV + 2,
                                            acl.ACL_DEV_ATTR_AICORE_CORE_NUM)
        self.assertEqual(ret, acl.ACL_ERROR_RT_INVALID_DEVICEID)
        self.assertEqual(acl.rt.peek_at_last_error(0), ret)
        self.assertEqual(acl.rt.get_last_error(0), ret)
        self.assertEqual(acl.rt.get_last_error(0), acl.ACL_SUCCESS)
        msg = acl.get_recent_err_msg()
        self.assertIsInstance(msg, str)
        self.assertIn("no device %d" % (NO_DEV + 2), msg)
        self.assertIsNone(acl.get_recent_err_msg())
        self.assertEqual(acl.rt.get_last_error(1), acl.ACL_ERROR_INVALID_PARAM)

    def test_errors_are_per_thread(self):
        seen = {}
        bar = threading.Barrier(2)

        def worker(dev):
            acl.rt.get_device_info(dev, acl.ACL_DEV_ATTR_AICORE_CORE_NUM)
            bar.wait()
            seen[dev] = (acl.rt.get_last_error(0), acl.get_recent_err_msg())

        bad = (NO_DEV + 3, NO_DEV + 5)
        ts = [threading.Thread(target=worker, args=(d,)) for d in bad]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        ids = ("one device: 0" if NO_DEV == 1 else
               "devices 0 to %d" % (NO_DEV - 1))
        for d in bad:
            self.assertEqual(seen[d][0], acl.ACL_ERROR_RT_INVALID_DEVICEID)
            self.assertEqual(seen[d][1],
                             "aclrtGetDeviceInfo: no device %d (%s)" % (d, ids))
        self.assertEqual(acl.rt.peek_at_last_error(0), acl.ACL_SUCCESS)
        self.assertIsNone(acl.get_recent_err_msg())

    def test_system_facts(self):
        self.assertEqual(acl.get_soc_name(), "npu-mem")
        self.assertEqual(acl.rt.get_soc_name(), "npu-mem")
        self.assertEqual(acl.rt.check_arch_compatibility("npu-mem"), (1, 0))
        self.assertEqual(acl.rt.check_arch_compatibility("Ascend910B1"), (0, 0))
        major, minor, patch, ret = acl.rt.get_version()
        self.assertEqual((major, minor, patch, ret), (1, 17, 0, 0))
        version, ret = acl.sys_get_version_str("runtime")
        self.assertEqual(ret, 0)
        a, b, c = (int(x) for x in version.split(".")[:3])
        self.assertEqual(acl.sys_get_version_num("runtime"),
                         (a * 1000000 + b * 1000 + c, 0))
        self.assertEqual(acl.sys_get_version_str("toolkit")[1],
                         acl.ACL_ERROR_INVALID_FILE)
        self.assertEqual(acl.get_cann_attribute_list(), ([], 0))
        self.assertEqual(acl.get_cann_attribute(acl.ACL_CANN_ATTR_BF16), (0, 0))
        self.assertEqual(acl.get_cann_attribute(7)[1], acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.get_device_capability(0, acl.ACL_DEVICE_INFO_AI_CORE_NUM),
                         (0, 0))
        pid, ret = acl.rt.device_get_bare_tgid()
        self.assertEqual((pid, ret), (os.getpid(), 0))
        self.assertEqual(acl.rt.device_can_access_peer(0, 0)[1],
                         acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.device_peer_access_status(0, 0), (0, 0))
        self.assertEqual(acl.rt.get_device_res_limit(0, acl.ACL_RT_DEV_RES_CUBE_CORE),
                         (0, 0))
        self.assertEqual(acl.rt.set_device_res_limit(0, 0, 4),
                         acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.reset_device_res_limit(NO_DEV),
                         acl.ACL_ERROR_RT_INVALID_DEVICEID)
        clear_errors()

    def test_float16(self):
        self.assertEqual(acl.float_to_float16(1.0), 0x3C00)
        self.assertEqual(acl.float_to_float16(float("inf")), 0x7BFF)
        self.assertEqual(acl.float_to_float16(float("-inf")), 0xFBFF)
        self.assertEqual(acl.float_to_float16(float("nan")), 0x7BFF)
        self.assertEqual(acl.float16_to_float(0x3555), 0.333251953125)
        self.assertEqual(acl.float16_to_float(0x7C00), 65536.0)
        for h in range(0, 0x7C00, 97):
            self.assertEqual(acl.float_to_float16(acl.float16_to_float(h)), h)
        self.assertEqual(acl.data_type_size(acl.ACL_FLOAT16), 2)
        self.assertEqual(acl.data_type_size(acl.ACL_COMPLEX128), 16)
        self.assertEqual(acl.data_type_size(acl.ACL_STRING), 0)
        with self.assertRaises(OverflowError):
            acl.float16_to_float(0x10000)
        with self.assertRaises(TypeError):
            acl.float16_to_float(1.5)
        with self.assertRaises(TypeError):
            acl.rt.get_device_info("0", 301)


@unittest.skipUnless(HAVE_DEVICE, "npu_mem module not loaded")
class WithDevice(unittest.TestCase):
    def setUp(self):
        clear_errors()

    def test_device_facts(self):
        total, ret = acl.rt.get_device_info(0, acl.ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE)
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.set_device(0), 0)
        try:
            free_b, total_b, ret = acl.rt.get_mem_info(acl.ACL_DDR_MEM)
            self.assertEqual(ret, 0)
            self.assertEqual(total, total_b)
            self.assertEqual(acl.rt.query_device_status(0),
                             (acl.ACL_RT_DEVICE_STATUS_NORMAL, 0))
            util, ret = acl.rt.get_device_utilization_rate(0)
            self.assertEqual(ret, 0)
            self.assertEqual(util["cube_utilization"], -1)
            self.assertGreaterEqual(util["memory_utilization"], 0)
            self.assertLessEqual(util["memory_utilization"], 100)
            self.assertEqual(acl.rt.device_enable_peer_access(0, 0),
                             acl.ACL_ERROR_INVALID_PARAM)
            uuid, ret = acl.rt.device_get_uuid(0)
            if ret == 0:
                self.assertEqual(len(uuid), 16)
        finally:
            self.assertEqual(acl.rt.reset_device(0), 0)
        self.assertEqual(acl.rt.query_device_status(NO_DEV)[1],
                         acl.ACL_ERROR_RT_INVALID_DEVICEID)
        clear_errors()


if __name__ == "__main__":
    unittest.main()
