# SPDX-License-Identifier: MIT
"""acl on several NPUs: the per-device calls through pyACL.

Runs where the npu_mem module serves two devices or more (the
x86_64-multi-edu guest has four); skips elsewhere.  Outputs first, ret
last, as pyACL.

    PYTHONPATH=build/python python3 -m unittest tests/python/test_multi_device.py -v
"""
import ctypes
import os
import sys
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "build", "python"))

import acl  # noqa: E402

N = 64 * 1024
D2D = 3
H2D = 1
D2H = 2


def device_count():
    count, ret = acl.rt.get_device_count()
    return count if ret == 0 else 0


def high_pair():
    """Devices 2 and 3 where there are four, else 0 and 1."""
    return (2, 3) if device_count() >= 4 else (0, 1)


def usage(dev, name):
    infos, ret = acl.rt.get_mem_usage_info(dev, 2)
    assert ret == 0, ret
    return next(i["curMemSize"] for i in infos if i["name"] == name)


@unittest.skipUnless(device_count() >= 2, "fewer than two NPUs")
class MultiDevice(unittest.TestCase):
    def tearDown(self):
        # Every test sets each device at most twice; more resets are harmless.
        for d in range(device_count()):
            for _ in range(3):
                acl.rt.reset_device(d)

    def test_count_and_ids(self):
        n = device_count()
        self.assertEqual(acl.rt.set_device(n), acl.ACL_ERROR_RT_INVALID_DEVICEID)
        for d in range(n):
            self.assertEqual(acl.rt.set_device(d), 0)
            self.assertEqual(acl.rt.get_device(), (d, 0))
            bus_id, ret = acl.rt.device_get_pci_bus_id(d)
            self.assertEqual(ret, 0)
            self.assertEqual(len(bus_id), 12)
            self.assertEqual(acl.rt.device_get_by_pci_bus_id(bus_id), (d, 0))
            free, total, ret = acl.rt.get_mem_info(acl.ACL_HBM_MEM)
            self.assertEqual(ret, 0)
            self.assertGreater(total, 0)
        self.assertEqual(acl.rt.device_get_pci_bus_id(n)[1],
                         acl.ACL_ERROR_RT_INVALID_DEVICEID)
        self.assertEqual(acl.rt.get_devices_topo(0, 0)[1], acl.ACL_ERROR_INVALID_PARAM)
        topo, ret = acl.rt.get_devices_topo(0, 1)
        self.assertEqual(ret, 0)
        self.assertIn(topo, (acl.ACL_RT_DEVS_TOPOLOGY_PHB, acl.ACL_RT_DEVS_TOPOLOGY_SYS))

    def test_context_switches_device(self):
        self.assertEqual(acl.rt.set_device(0), 0)
        ctx0, ret = acl.rt.get_context()
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.set_device(1), 0)
        self.assertEqual(acl.rt.get_device(), (1, 0))
        self.assertEqual(acl.rt.set_context(ctx0), 0)
        self.assertEqual(acl.rt.get_device(), (0, 0))

    def test_peer_access_and_copy(self):
        self.assertEqual(acl.rt.device_can_access_peer(0, 1), (1, 0))
        self.assertEqual(acl.rt.device_can_access_peer(1, 1)[1],
                         acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.set_device(0), 0)
        src, ret = acl.rt.malloc(N, 2)
        self.assertEqual(ret, 0)
        pattern = bytes(i * 7 & 0xFF for i in range(N))
        host = ctypes.create_string_buffer(pattern, N)
        self.assertEqual(acl.rt.memcpy(src, N, ctypes.addressof(host), N, H2D), 0)
        self.assertEqual(acl.rt.set_device(1), 0)
        dst, ret = acl.rt.malloc(N, 2)
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.memcpy(dst, N, src, N, D2D),
                         acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.device_enable_peer_access(0, 1),
                         acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.device_disable_peer_access(0),
                         acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.device_enable_peer_access(0, 0), 0)
        self.assertEqual(acl.rt.device_peer_access_status(1, 0), (1, 0))
        self.assertEqual(acl.rt.memcpy(dst, N, src, N, D2D), 0)
        out = ctypes.create_string_buffer(N)
        self.assertEqual(acl.rt.memcpy(ctypes.addressof(out), N, dst, N, D2H), 0)
        self.assertEqual(out.raw, pattern)
        self.assertEqual(acl.rt.device_disable_peer_access(0), 0)
        self.assertEqual(acl.rt.free(dst), 0)
        self.assertEqual(acl.rt.free(src), 0)

    def test_usage_info_per_device(self):
        mib = 1 << 20
        for d, o in (high_pair(), high_pair()[::-1]):
            self.assertEqual(acl.rt.set_device(d), 0)
            app, other = usage(d, "APP"), usage(o, "APP")
            p, ret = acl.rt.malloc(mib, 2)
            self.assertEqual(ret, 0)
            self.assertGreaterEqual(usage(d, "APP"), app + mib)
            self.assertEqual(usage(o, "APP"), other)
            self.assertEqual(acl.rt.free(p), 0)
            # Kept by the caching pool for this device.
            self.assertGreaterEqual(usage(d, "RUNTIME"), mib)
            self.assertEqual(acl.rt.reset_device(d), 0)
        self.assertEqual(acl.rt.get_mem_usage_info(device_count(), 2),
                         ([], acl.ACL_ERROR_RT_INVALID_DEVICEID))

    def test_res_limits_per_device(self):
        vector = acl.ACL_RT_DEV_RES_VECTOR_CORE
        d, o = high_pair()
        self.addCleanup(acl.rt.reset_device_res_limit, d)
        cores, ret = acl.rt.get_device_res_limit(o, vector)
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.set_device_res_limit(d, vector, 0), 0)
        self.assertEqual(acl.rt.get_device_res_limit(d, vector), (0, 0))
        self.assertEqual(acl.rt.get_device_res_limit(o, vector), (cores, 0))
        self.assertEqual(acl.rt.reset_device_res_limit(o), 0)
        self.assertEqual(acl.rt.get_device_res_limit(d, vector), (0, 0))
        self.assertEqual(acl.rt.reset_device_res_limit(d), 0)
        self.assertEqual(acl.rt.get_device_res_limit(d, vector), (cores, 0))
        n = device_count()
        self.assertEqual(acl.rt.set_device_res_limit(n, vector, 0),
                         acl.ACL_ERROR_RT_INVALID_DEVICEID)
        self.assertEqual(acl.rt.reset_device_res_limit(n),
                         acl.ACL_ERROR_RT_INVALID_DEVICEID)


if __name__ == "__main__":
    unittest.main()
