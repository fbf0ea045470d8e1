# SPDX-License-Identifier: MIT
"""acl.rt IPC memory and registered host memory (lib/python/ipcmem.c).

pyACL's names: key, ret = ipc_mem_get_export_key(dev_ptr, size, len,
flags); ret = ipc_mem_set_import_pid(key, pids); dev_ptr, ret =
ipc_mem_import_by_key(key, flags); ret = ipc_mem_close(key); dev_ptr, ret =
host_register(ptr, size, type); ret = host_register_v2(ptr, size, flag);
ret = host_unregister(ptr); ptr_device, ret = host_get_device_pointer(ptr,
flag); ours: ret = ipc_mem_set_attr(key, type, attr), capability, ret =
host_mem_map_capabilities(device_id, hac_type).  Tests that need
/dev/npu-mem are skipped where the npu_mem module is not loaded.

    PYTHONPATH=build/python python3 -m unittest -v tests/python/test_ipcmem.py
"""
import ctypes
import mmap
import os
import subprocess
import sys
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "build", "python"))

import acl  # noqa: E402

DEVICE = os.environ.get("NPU_MEM_DEVICE") or "/dev/npu-mem"
HAVE_DEVICE = os.path.exists(DEVICE) or os.path.exists("/sys/module/npu_mem")
# An id that names no device: the module's device count (several NPUs in
# the multi-device guest), 1 where it cannot be asked.
NO_DEV = acl.rt.get_device_count()[0] or 1
ENV = dict(os.environ, PYTHONPATH=os.path.join(TOP, "build", "python"))
NORMAL = acl.ACL_MEM_MALLOC_NORMAL_ONLY
UNKNOWN = "aclmem:mem:0123456789abcdef0123456789abcdef:000000000000"


class Constants(unittest.TestCase):
    def test_values_are_cann(self):
        self.assertEqual((acl.ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT,
                          acl.ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION,
                          acl.ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT,
                          acl.ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS),
                         (0, 1, 0, 1))
        self.assertEqual(acl.rt.ACL_RT_IPC_MEM_ATTR_ACCESS_LINK, 0)
        self.assertEqual(acl.ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_UB_MULTI_PORT_PATH, 3)
        self.assertEqual((acl.ACL_HOST_REG_MAPPED, acl.ACL_HOST_REG_IOMEMORY,
                          acl.ACL_HOST_REG_READONLY, acl.ACL_HOST_REG_PINNED),
                         (2, 4, 8, 0x10000000))
        self.assertEqual((acl.ACL_HOST_REGISTER_MAPPED,
                          acl.ACL_HOST_REGISTER_IOMEMORY,
                          acl.ACL_HOST_REGISTER_READONLY), (0, 4, 8))
        self.assertEqual((acl.ACL_RT_HAC_TYPE_STARS, acl.ACL_RT_HAC_TYPE_PCIEDMA,
                          acl.ACL_RT_HAC_TYPE_CCU), (0, 4, 9))
        self.assertEqual((acl.ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED,
                          acl.ACL_RT_HOST_MEM_MAP_SUPPORTED), (0, 1))

    def test_argument_types(self):
        for fn, args in [
            (acl.rt.ipc_mem_get_export_key, ("1", 1, 65, 0)),
            (acl.rt.ipc_mem_set_import_pid, (UNKNOWN, 5)),
            (acl.rt.ipc_mem_set_import_pid, (UNKNOWN, ["1"])),
            (acl.rt.ipc_mem_import_by_key, (5, 0)),
            (acl.rt.ipc_mem_close, (None,)),
            (acl.rt.ipc_mem_set_attr, (UNKNOWN, "0", 0)),
            (acl.rt.host_register, (1, 4096, None)),
            (acl.rt.host_register_v2, (1.0, 4096, 2)),
            (acl.rt.host_unregister, ("p",)),
            (acl.rt.host_get_device_pointer, (1, "0")),
            (acl.rt.host_mem_map_capabilities, (0, None)),
        ]:
            with self.assertRaises(TypeError, msg=fn.__name__):
                fn(*args)
        with self.assertRaises(OverflowError):
            acl.rt.host_register_v2(1, 4096, 1 << 32)

    def test_without_device(self):
        """In a fresh process, before set_device: argument codes first."""
        code = (
            "import acl\n"
            "def eq(a, b):\n"
            "    assert a == b, (a, b)\n"
            f"U = {UNKNOWN!r}\n"
            "eq(acl.rt.ipc_mem_get_export_key(0, 64, 65, 0), ('', 100000))\n"
            "eq(acl.rt.ipc_mem_import_by_key('x', 0), (0, 100000))\n"
            "eq(acl.rt.ipc_mem_import_by_key(U, 0), (0, 107002))\n"
            "eq(acl.rt.ipc_mem_set_import_pid(U, []), 100000)\n"
            "eq(acl.rt.ipc_mem_close(U), 107000)\n"
            "eq(acl.rt.host_register_v2(0, 4096, 2), 100000)\n"
            "eq(acl.rt.host_register(4096, 4096, 0), (0, 107002))\n"
            "eq(acl.rt.host_unregister(4096), 107000)\n"
            "eq(acl.rt.host_get_device_pointer(4096, 0), (0, 107000))\n"
            "eq(acl.rt.host_mem_map_capabilities(0, 4), (1, 0))\n"
            f"eq(acl.rt.host_mem_map_capabilities({NO_DEV}, 4), (0, 107001))\n"
        )
        out = subprocess.run([sys.executable, "-c", code], env=ENV,
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)


# The importing process: reads a key on stdin, imports it, prints the code
# and the first 16 bytes, writes b"\x77" * 16 over them, closes.
IMPORTER = """
import sys
import acl
key = sys.stdin.readline().strip()
assert acl.rt.set_device(0) == 0
dev, ret = acl.rt.ipc_mem_import_by_key(key, 0)
print("import", ret, flush=True)
if ret == 0:
    print(acl.util.ptr_to_bytes(dev, 16).hex(), flush=True)
    host = acl.util.bytes_to_ptr(b"\\x77" * 16)
    assert acl.rt.memcpy(dev, 16, host, 16, acl.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    assert acl.rt.free(dev) == acl.ACL_ERROR_RT_PARAM_INVALID
    assert acl.rt.ipc_mem_close(key) == 0
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

    def malloc(self, size, fill):
        p, ret = acl.rt.malloc(size, NORMAL)
        self.assertEqual(ret, 0)
        self.addCleanup(acl.rt.free, p)
        self.assertEqual(acl.rt.memset(p, size, fill, size), 0)
        return p

    def importer(self, key):
        proc = subprocess.Popen([sys.executable, "-c", IMPORTER], env=ENV,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        out, err = proc.communicate(key + "\n", timeout=120)
        self.assertEqual(proc.returncode, 0, err)
        return out.split()

    def test_export_import_between_processes(self):
        dev = self.malloc(8192, 0x11)
        self.assertEqual(acl.rt.ipc_mem_get_export_key(dev, 8192, 56, 0),
                         ("", acl.ACL_ERROR_INVALID_PARAM))
        key, ret = acl.rt.ipc_mem_get_export_key(dev, 8192, 65, 0)
        self.assertEqual(ret, 0)
        self.assertEqual(len(key), 56)
        self.assertEqual(acl.rt.ipc_mem_set_attr(
            key, acl.ACL_RT_IPC_MEM_ATTR_ACCESS_LINK,
            acl.ACL_RT_IPC_MEM_ATTR_ACCESS_LINK_HCCS), 0)
        # Not on the list: refused.
        self.assertEqual(self.importer(key),
                         ["import", str(acl.ACL_ERROR_RT_NO_PERMISSION)])
        # Validation disabled: imported, read, written.
        key2, ret = acl.rt.ipc_mem_get_export_key(
            dev, 8192, 65, acl.ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
        self.assertEqual(ret, 0)
        self.assertEqual(self.importer(key2), ["import", "0", "11" * 16])
        self.assertEqual(acl.util.ptr_to_bytes(dev, 17), b"\x77" * 16 + b"\x11")
        self.assertEqual(acl.rt.ipc_mem_close(key2), 0)
        self.assertEqual(self.importer(key2),
                         ["import", str(acl.ACL_ERROR_RT_PARAM_INVALID)])
        # The pid list: this process may import its own key.
        self.assertEqual(acl.rt.ipc_mem_set_import_pid(key, [os.getpid()]), 0)
        imp, ret = acl.rt.ipc_mem_import_by_key(key, 0)
        self.assertEqual(ret, 0)
        self.assertNotEqual(imp, dev)
        self.assertEqual(acl.util.ptr_to_bytes(imp, 17), b"\x77" * 16 + b"\x11")
        self.assertEqual(acl.rt.ipc_mem_close(key), 0)      # the import
        self.assertEqual(acl.rt.ipc_mem_close(key), 0)      # the export
        self.assertEqual(acl.rt.ipc_mem_close(key), acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.ipc_mem_import_by_key(key, 0),
                         (0, acl.ACL_ERROR_RT_PARAM_INVALID))

    def test_host_register(self):
        m = mmap.mmap(-1, 4 * 4096)     # page-aligned, never closed:
        m[:4] = b"abcd"                 # the ctypes view pins it
        ptr = ctypes.addressof(ctypes.c_char.from_buffer(m))
        dev, ret = acl.rt.host_register(ptr, 4 * 4096, acl.ACL_HOST_REGISTER_MAPPED)
        self.assertEqual((dev, ret), (ptr, 0))
        self.assertEqual(acl.rt.host_register_v2(ptr, 4096, acl.ACL_HOST_REG_MAPPED),
                         acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.host_get_device_pointer(ptr + 8, 0), (ptr + 8, 0))
        d = self.malloc(4096, 0)
        self.assertEqual(acl.rt.memcpy(d, 4, ptr, 4, acl.ACL_MEMCPY_HOST_TO_DEVICE), 0)
        self.assertEqual(acl.util.ptr_to_bytes(d, 4), b"abcd")
        self.assertEqual(acl.rt.host_unregister(ptr), 0)
        self.assertEqual(acl.rt.host_unregister(ptr), acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.host_register_v2(ptr, 4096, acl.ACL_HOST_REG_PINNED), 0)
        self.assertEqual(acl.rt.host_get_device_pointer(ptr, 0),
                         (0, acl.ACL_ERROR_RT_PARAM_INVALID))
        self.assertEqual(acl.rt.host_unregister(ptr), 0)
        self.assertEqual(acl.rt.host_register(ptr, 4096, acl.ACL_HOST_REGISTER_IOMEMORY),
                         (0, acl.ACL_ERROR_RT_FEATURE_NOT_SUPPORT))
        self.assertEqual(acl.rt.host_mem_map_capabilities(0, acl.ACL_RT_HAC_TYPE_AIC),
                         (acl.ACL_RT_HOST_MEM_MAP_NOT_SUPPORTED, 0))


if __name__ == "__main__":
    unittest.main()
