# SPDX-License-Identifier: MIT
"""acl.rt's virtual-memory calls (lib/python/vmm.c).

Reservations, physical handles, pieces mapped into a reservation and used
with acl.rt.memcpy across their boundaries, access flags, retained handles,
and shareable handles between processes (V1 and V2, pid list enforced).
Outputs first, ret last, as pyACL.

    PYTHONPATH=build/python python3 -m unittest tests/python/test_vmm.py -v
"""
import ctypes
import os
import sys
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "build", "python"))

import acl  # noqa: E402

DEVICE = os.environ.get("NPU_MEM_DEVICE") or "/dev/npu-mem"
HAVE_DEVICE = os.path.exists(DEVICE) or os.path.exists("/sys/module/npu_mem")
KiB64 = 64 << 10
MiB2 = 2 << 20

rt = acl.rt
OK = acl.ACL_SUCCESS
EINVAL = acl.ACL_ERROR_INVALID_PARAM            # 100000
EPARAM = acl.ACL_ERROR_RT_PARAM_INVALID         # 107000
ENOPERM = acl.ACL_ERROR_RT_NO_PERMISSION        # 207006
DEV = {"id": 0, "type": acl.ACL_MEM_LOCATION_TYPE_DEVICE}


def prop(mem_attr):
    return {"handleType": acl.ACL_MEM_HANDLE_TYPE_NONE,
            "allocationType": acl.ACL_MEM_ALLOCATION_TYPE_PINNED,
            "memAttr": mem_attr, "location": DEV, "reserve": 0}


class NoDevice(unittest.TestCase):
    def test_constants(self):
        self.assertEqual(acl.ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT, 1)
        self.assertEqual(acl.ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, 2)
        self.assertEqual(acl.ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION, 1)
        self.assertEqual(acl.ACL_RT_MEM_ACCESS_FLAGS_READ, 1)
        self.assertEqual(acl.ACL_RT_MEM_ACCESS_FLAGS_READWRITE, 3)
        self.assertEqual(acl.HUGE_PAGE_TYPE, 1)

    def test_arguments(self):
        self.assertEqual(rt.reserve_mem_address(0, 0, 0, 0), (0, EINVAL))
        self.assertEqual(rt.release_mem_address(0), EINVAL)
        self.assertEqual(rt.free_physical(0), EINVAL)
        self.assertEqual(rt.unmap_mem(0), EINVAL)
        with self.assertRaises(TypeError):
            rt.malloc_physical(KiB64, [], 0)
        with self.assertRaises(ValueError):
            rt.mem_import_from_shareable_handle_v2(
                b"short", acl.ACL_MEM_SHARE_HANDLE_TYPE_FABRIC, 0)


@unittest.skipUnless(HAVE_DEVICE, f"{DEVICE} absent: npu_mem module not loaded")
class WithDevice(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ret = acl.init()
        assert ret in (OK, acl.ACL_ERROR_REPEAT_INITIALIZE), ret
        assert rt.set_device(0) == OK

    @classmethod
    def tearDownClass(cls):
        rt.reset_device(0)
        acl.finalize()

    def phys(self, size=KiB64, attr=acl.ACL_MEM_NORMAL):
        h, ret = rt.malloc_physical(size, prop(attr), 0)
        self.assertEqual(ret, OK)
        self.assertNotEqual(h, 0)
        return h

    def test_three_pieces(self):
        va, ret = rt.reserve_mem_address(3 * KiB64, 0, 0, 0)
        self.assertEqual(ret, OK)
        self.assertEqual(va % MiB2, 0)
        hs = [self.phys() for _ in range(3)]
        for i, h in enumerate(hs):
            self.assertEqual(rt.map_mem(va + i * KiB64, KiB64, 0, h, 0), OK)
        self.assertEqual(rt.map_mem(va, KiB64, 0, hs[0], 0), EPARAM)
        self.assertEqual(rt.map_mem(va, 100, 0, hs[0], 0), EINVAL)
        self.assertEqual(rt.release_mem_address(va), EPARAM)
        n = 3 * KiB64
        src = (ctypes.c_ubyte * n)(*[(i * 7) & 0xff for i in range(n)])
        dst = (ctypes.c_ubyte * n)()
        self.assertEqual(rt.memcpy(va, n, ctypes.addressof(src), n,
                                   acl.ACL_MEMCPY_HOST_TO_DEVICE), OK)
        self.assertEqual(rt.memcpy(ctypes.addressof(dst), n, va, n,
                                   acl.ACL_MEMCPY_DEVICE_TO_HOST), OK)
        self.assertEqual(bytes(dst), bytes(src))
        base, size, ret = rt.mem_get_address_range(va + KiB64 + 5)
        self.assertEqual((base, size, ret), (va + KiB64, KiB64, OK))
        p, ret = rt.mem_get_allocation_properties_from_handle(hs[1])
        self.assertEqual(ret, OK)
        self.assertEqual(p["memAttr"], acl.ACL_MEM_NORMAL)
        self.assertEqual(p["location"]["type"], acl.ACL_MEM_LOCATION_TYPE_DEVICE)
        # Read-only piece: the library refuses writes, reads work.
        desc = [{"flags": acl.ACL_RT_MEM_ACCESS_FLAGS_READ, "location": DEV}]
        self.assertEqual(rt.mem_set_access(va + KiB64, KiB64, desc), OK)
        self.assertEqual(rt.mem_get_access(va + KiB64, DEV),
                         (acl.ACL_RT_MEM_ACCESS_FLAGS_READ, OK))
        self.assertEqual(rt.memcpy(va + KiB64, 8, ctypes.addressof(src), 8,
                                   acl.ACL_MEMCPY_HOST_TO_DEVICE), EPARAM)
        self.assertEqual(rt.memcpy(ctypes.addressof(dst), n, va, n,
                                   acl.ACL_MEMCPY_DEVICE_TO_HOST), OK)
        self.assertEqual(rt.mem_set_access(va, 100, desc), EPARAM)
        # Retain takes a reference: two frees.
        r, ret = rt.mem_retain_allocation_handle(va)
        self.assertEqual((r, ret), (hs[0], OK))
        self.assertEqual(rt.free_physical(hs[0]), OK)
        self.assertEqual(rt.mem_get_allocation_properties_from_handle(
            hs[0])[1], OK)
        for i, h in enumerate(hs):
            self.assertEqual(rt.unmap_mem(va + i * KiB64), OK)
            self.assertEqual(rt.free_physical(h), OK)
        self.assertEqual(rt.free_physical(hs[0]), EPARAM)
        self.assertEqual(rt.release_mem_address(va), OK)

    def share(self, v2_type=None, disable=False, allow_child=True,
              expect=0):
        """Export a handle, let a forked child import it and write."""
        h = self.phys()
        va, ret = rt.reserve_mem_address(KiB64, 0, 0, 0)
        self.assertEqual(rt.map_mem(va, KiB64, 0, h, 0), OK)
        ctypes.memmove(va, b"shared", 6)
        flags = acl.ACL_RT_VMM_EXPORT_FLAG_DISABLE_PID_VALIDATION \
            if disable else 0
        if v2_type is None:
            sh, ret = rt.mem_export_to_shareable_handle(
                h, acl.ACL_MEM_HANDLE_TYPE_NONE, flags)
        else:
            sh, ret = rt.mem_export_to_shareable_handle_v2(h, flags, v2_type)
        self.assertEqual(ret, OK)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.close(w)
                os.read(r, 1)
                rt.set_device(0)
                if v2_type is None:
                    h2, ret = rt.mem_import_from_shareable_handle(sh, 0)
                else:
                    h2, ret = rt.mem_import_from_shareable_handle_v2(
                        sh, v2_type, 0)
                if ret == ENOPERM:
                    code = 91
                elif ret == OK:
                    va2, _ = rt.reserve_mem_address(KiB64, 0, 0, 0)
                    if rt.map_mem(va2, KiB64, 0, h2, 0) == OK and \
                            ctypes.string_at(va2, 6) == b"shared":
                        ctypes.memmove(va2, b"child!", 6)
                        code = 0
                        rt.unmap_mem(va2)
                    rt.free_physical(h2)
            finally:
                os._exit(code)
        os.close(r)
        if allow_child:
            if v2_type is None:
                ret = rt.mem_set_pid_to_shareable_handle(sh, [pid])
            else:
                ret = rt.mem_set_pid_to_shareable_handle_v2(sh, v2_type,
                                                            [pid])
            self.assertEqual(ret, OK)
        os.write(w, b"x")
        os.close(w)
        _, st = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(st), expect)
        if expect == 0:
            self.assertEqual(ctypes.string_at(va, 6), b"child!")
        self.assertEqual(rt.unmap_mem(va), OK)
        self.assertEqual(rt.free_physical(h), OK)
        self.assertEqual(rt.release_mem_address(va), OK)

    def test_share_v1(self):
        self.share()

    def test_share_v1_not_listed(self):
        self.share(allow_child=False, expect=91)

    def test_share_v1_no_validation(self):
        self.share(disable=True, allow_child=False)

    def test_share_v2_default(self):
        self.share(v2_type=acl.ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT)

    def test_share_v2_default_no_validation(self):
        self.share(v2_type=acl.ACL_MEM_SHARE_HANDLE_TYPE_DEFAULT,
                   disable=True, allow_child=False)

    def test_share_v2_fabric_any_pid(self):
        self.share(v2_type=acl.ACL_MEM_SHARE_HANDLE_TYPE_FABRIC,
                   disable=True, allow_child=False)


if __name__ == "__main__":
    unittest.main()
