# SPDX-License-Identifier: MIT
"""The "acl" Python module (lib/python/aclmodule.c): pyACL conventions.

Outputs come first and ret last; pointers are ints; wrong argument types
raise TypeError.  Tests that need /dev/npu-mem are skipped where the npu_mem
module is not loaded (run them in a guest: tests/vm/vm-run -- python3 -m
unittest ...); the others run anywhere.

    PYTHONPATH=build/python python3 -m unittest discover -s tests/python -v
"""
import os
import subprocess
import sys
import threading
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "build", "python"))

import acl  # noqa: E402

DEVICE = os.environ.get("NPU_MEM_DEVICE") or "/dev/npu-mem"
# With the module loaded, a missing node is a failure to show, not a skip.
HAVE_DEVICE = os.path.exists(DEVICE) or os.path.exists("/sys/module/npu_mem")
MiB = 1 << 20


class Constants(unittest.TestCase):
    def test_values_are_cann(self):
        self.assertEqual(acl.ACL_SUCCESS, 0)
        self.assertEqual(acl.ACL_ERROR_INVALID_PARAM, 100000)
        self.assertEqual(acl.ACL_ERROR_REPEAT_INITIALIZE, 100002)
        self.assertEqual(acl.ACL_ERROR_RT_PARAM_INVALID, 107000)
        self.assertEqual(acl.ACL_ERROR_RT_CONTEXT_NULL, 107002)
        self.assertEqual(acl.ACL_ERROR_RT_MEMORY_ALLOCATION, 207001)
        self.assertEqual(acl.ACL_ERROR_RT_NO_DEVICE, 207004)
        self.assertEqual(acl.ACL_MEM_MALLOC_HUGE_FIRST, 0)
        self.assertEqual(acl.ACL_MEM_MALLOC_HUGE_ONLY, 1)
        self.assertEqual(acl.ACL_MEM_MALLOC_NORMAL_ONLY, 2)
        self.assertEqual(acl.ACL_MEM_MALLOC_HUGE1G_ONLY, 6)
        self.assertEqual(acl.ACL_MEM_MALLOC_HUGE1G_ONLY_P2P, 7)
        self.assertEqual(acl.ACL_MEM_ACCESS_USER_SPACE_READONLY, 0x100000)
        self.assertEqual(acl.ACL_MEMCPY_HOST_TO_DEVICE, 1)
        self.assertEqual(acl.ACL_MEMCPY_DEVICE_TO_HOST, 2)
        self.assertEqual(acl.ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, 5)
        self.assertEqual(acl.ACL_DDR_MEM, 0)
        self.assertEqual(acl.ACL_MEM_P2P_HUGE1G, 17)
        # The same names on acl.rt, as some pyACL code expects.
        self.assertEqual(acl.rt.ACL_MEM_MALLOC_HUGE_ONLY, 1)

    def test_submodules_import(self):
        import acl.rt
        from acl import util
        self.assertIs(acl.rt, sys.modules["acl.rt"])
        self.assertTrue(callable(util.ptr_to_bytes))


class Types(unittest.TestCase):
    """Wrong argument types raise TypeError before anything is done."""

    def test_type_errors(self):
        calls = [
            (acl.rt.malloc, ("1", 0)),
            (acl.rt.malloc, (1.5, 0)),
            (acl.rt.malloc, (16, "0")),
            (acl.rt.malloc, (None, 0)),
            (acl.rt.malloc_cached, (16, 0.0)),
            (acl.rt.malloc_align32, ([16], 0)),
            (acl.rt.malloc_host, ("16",)),
            (acl.rt.free, ("0x1000",)),
            (acl.rt.free, (None,)),
            (acl.rt.free_host, (1.0,)),
            (acl.rt.mem_flush, (1, "8")),
            (acl.rt.mem_invalidate, ("1", 8)),
            (acl.rt.memset, (1, 8, "a", 8)),
            (acl.rt.memcpy, (1, 8, b"x", 8, 1)),
            (acl.rt.memcpy, (1, 8, 2, 8, 1.0)),
            (acl.rt.get_mem_info, (None,)),
            (acl.rt.set_device, ("0",)),
            (acl.rt.reset_device, (0.0,)),
            (acl.init, (5,)),
            (acl.util.ptr_to_bytes, ("p", 1)),
            (acl.util.bytes_to_ptr, (5,)),
        ]
        for fn, args in calls:
            with self.subTest(fn=fn.__name__, args=args):
                with self.assertRaises(TypeError):
                    fn(*args)

    def test_argument_count(self):
        with self.assertRaises(TypeError):
            acl.rt.malloc(16)
        with self.assertRaises(TypeError):
            acl.rt.memcpy(1, 2, 3, 4)

    def test_out_of_range_ints(self):
        with self.assertRaises(OverflowError):
            acl.rt.malloc(-1, 0)
        with self.assertRaises(OverflowError):
            acl.rt.free(-1)
        with self.assertRaises(OverflowError):
            acl.rt.set_device(1 << 40)


class NoCurrentDevice(unittest.TestCase):
    """API failures come back as ret, never as exceptions."""

    def test_without_set_device(self):
        # A fresh interpreter: this one may have set the device already.
        code = (
            "import acl, sys\n"
            "p, r = acl.rt.malloc(64, 0); assert (p, r) == (0, 107002), (p, r)\n"
            "p, r = acl.rt.malloc(0, 0); assert r == 100000, r\n"
            "assert acl.rt.free(0) == 100000\n"
            "assert acl.rt.memcpy(0, 0, 0, 0, 99) == 0\n"
            "f, t, r = acl.rt.get_mem_info(0); assert r == 107002, r\n"
            "d, r = acl.rt.get_device(); assert r == 107002, r\n"
        )
        env = dict(os.environ, PYTHONPATH=os.path.join(TOP, "build", "python"))
        subprocess.run([sys.executable, "-c", code], check=True, env=env)

    def test_missing_device(self):
        code = (
            "import acl\n"
            "assert acl.rt.set_device(0) == acl.ACL_ERROR_RT_NO_DEVICE\n"
            "assert acl.rt.set_device(1) == acl.ACL_ERROR_RT_INVALID_DEVICEID\n"
            "n, r = acl.rt.get_device_count(); assert (n, r) == (0, 207004)\n"
        )
        env = dict(os.environ, PYTHONPATH=os.path.join(TOP, "build", "python"),
                   NPU_MEM_DEVICE="/nonexistent/npu-mem")
        subprocess.run([sys.executable, "-c", code], check=True, env=env)

    def test_util_round_trip(self):
        data = bytes(range(256)) * 4
        ptr = acl.util.bytes_to_ptr(data)
        self.assertIsInstance(ptr, int)
        self.assertEqual(acl.util.ptr_to_bytes(ptr, len(data)), data)
        self.assertEqual(acl.util.ptr_to_bytes(ptr, 0), b"")
        buf = bytearray(b"abc")
        self.assertEqual(acl.util.ptr_to_bytes(acl.util.bytes_to_ptr(buf), 3),
                         b"abc")


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

    def test_every_policy(self):
        for fn in (acl.rt.malloc, acl.rt.malloc_cached, acl.rt.malloc_align32):
            for policy in (acl.ACL_MEM_MALLOC_HUGE_FIRST,
                           acl.ACL_MEM_MALLOC_HUGE_ONLY,
                           acl.ACL_MEM_MALLOC_NORMAL_ONLY):
                with self.subTest(fn=fn.__name__, policy=policy):
                    ptr, ret = fn(3 * MiB, policy)
                    self.assertEqual(ret, acl.ACL_SUCCESS)
                    self.assertIsInstance(ptr, int)
                    self.assertNotEqual(ptr, 0)
                    self.assertEqual(ptr % 64, 0)
                    self.assertEqual(acl.rt.memset(ptr, 3 * MiB, 0x5A, 3 * MiB), 0)
                    self.assertEqual(acl.util.ptr_to_bytes(ptr + 3 * MiB - 4, 4),
                                     b"\x5a" * 4)
                    self.assertEqual(acl.rt.free(ptr), acl.ACL_SUCCESS)

    def test_round_trip_through_device(self):
        size = 100000
        data = os.urandom(size)
        dev, ret = acl.rt.malloc_cached(size, acl.ACL_MEM_MALLOC_HUGE_FIRST)
        self.assertEqual(ret, 0)
        host, ret = acl.rt.malloc_host(size)
        self.assertEqual(ret, 0)
        src = acl.util.bytes_to_ptr(data)
        self.assertEqual(acl.rt.memcpy(dev, size, src, size,
                                       acl.ACL_MEMCPY_HOST_TO_DEVICE), 0)
        self.assertEqual(acl.rt.mem_flush(dev, size), 0)
        self.assertEqual(acl.rt.mem_invalidate(dev, size), 0)
        self.assertEqual(acl.rt.memcpy(host, size, dev, size,
                                       acl.ACL_MEMCPY_DEVICE_TO_HOST), 0)
        self.assertEqual(acl.util.ptr_to_bytes(host, size), data)
        attrs, ret = acl.rt.pointer_get_attributes(dev + 10)
        self.assertEqual(ret, 0)
        self.assertEqual(attrs["type"], acl.ACL_MEM_LOCATION_TYPE_DEVICE)
        self.assertEqual(acl.rt.free_host(host), 0)
        self.assertEqual(acl.rt.free(dev), 0)

    def test_errors_as_ret(self):
        dev, ret = acl.rt.malloc(64, acl.ACL_MEM_MALLOC_NORMAL_ONLY)
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.memset(dev, 8, 0, 9), acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.memcpy(dev, 8, dev, 8, 8), acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.mem_flush(dev, 0), acl.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(acl.rt.free(dev + 64), acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.free_host(dev), acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.free(dev), 0)
        self.assertEqual(acl.rt.free(dev), acl.ACL_ERROR_RT_PARAM_INVALID)
        self.assertEqual(acl.rt.malloc(0, 0), (0, acl.ACL_ERROR_INVALID_PARAM))
        self.assertEqual(acl.rt.free(0), acl.ACL_ERROR_INVALID_PARAM)

    def test_get_mem_info(self):
        free, total, ret = acl.rt.get_mem_info(acl.ACL_DDR_MEM)
        self.assertEqual(ret, 0)
        self.assertGreater(total, 0)
        self.assertLessEqual(free, total)
        for attr in range(18):
            f, t, ret = acl.rt.get_mem_info(attr)
            self.assertEqual(ret, 0)
            self.assertLessEqual(f, t)
        self.assertEqual(acl.rt.get_mem_info(acl.ACL_MEM_P2P_HUGE)[:2], (0, 0))
        self.assertEqual(acl.rt.get_mem_info(18)[2], acl.ACL_ERROR_INVALID_PARAM)

    def test_threads_share_nothing_but_work(self):
        # The GIL is released in calls; each thread sets its own device.
        errors = []

        def run():
            if acl.rt.set_device(0):
                errors.append("set_device")
                return
            for _ in range(50):
                ptr, ret = acl.rt.malloc(4096, acl.ACL_MEM_MALLOC_NORMAL_ONLY)
                if ret or acl.rt.memset(ptr, 4096, 1, 4096) or acl.rt.free(ptr):
                    errors.append(ret)
            acl.rt.reset_device(0)

        threads = [threading.Thread(target=run) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    def test_stream(self):
        dev, ret = acl.rt.malloc(4096, acl.ACL_MEM_MALLOC_NORMAL_ONLY)
        self.assertEqual(ret, 0)
        stream, ret = acl.rt.create_stream()
        self.assertEqual(ret, 0)
        data = b"\x42" * 4096
        self.assertEqual(acl.rt.memcpy_async(dev, 4096, acl.util.bytes_to_ptr(data),
                                             4096, acl.ACL_MEMCPY_HOST_TO_DEVICE,
                                             stream), 0)
        self.assertEqual(acl.rt.synchronize_stream(stream), 0)
        self.assertEqual(acl.util.ptr_to_bytes(dev, 4096), data)
        self.assertEqual(acl.rt.destroy_stream(stream), 0)
        self.assertEqual(acl.rt.free(dev), 0)

    def test_demo_script(self):
        env = dict(os.environ, PYTHONPATH=os.path.join(TOP, "build", "python"))
        out = subprocess.run([sys.executable,
                              os.path.join(TOP, "examples", "acl_demo.py"),
                              str(256 * 1024)],
                             env=env, capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("acl_demo.py: ok", out.stdout)


class InitFinalize(unittest.TestCase):
    def test_codes(self):
        code = (
            "import acl\n"
            "assert acl.init() == 0\n"
            "assert acl.init() == acl.ACL_ERROR_REPEAT_INITIALIZE\n"
            "assert acl.finalize() == 0\n"
            "assert acl.finalize() == acl.ACL_ERROR_REPEAT_FINALIZE\n"
            "assert acl.init('/nonexistent.json') == acl.ACL_ERROR_INVALID_FILE\n"
        )
        env = dict(os.environ, PYTHONPATH=os.path.join(TOP, "build", "python"))
        subprocess.run([sys.executable, "-c", code], check=True, env=env)


if __name__ == "__main__":
    unittest.main()
