# SPDX-License-Identifier: MIT
"""acl.mdl model run instances and acl.rt labels.

lib/python/model.c: the C names' words (pyACL documents no binding for
these), outputs first, ret last, handles are ints.  Work captured from a
stream runs only when the instance is executed, again each time; a label
switch picks its branch by an index read from device memory as it runs.
Tests that need /dev/npu-mem are skipped where the npu_mem module is not
loaded.

    PYTHONPATH=build/python python3 -m unittest -v tests/python/test_model.py
"""
import os
import sys
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "build", "python"))

import acl  # noqa: E402

DEVICE = os.environ.get("NPU_MEM_DEVICE") or "/dev/npu-mem"
HAVE_DEVICE = os.path.exists(DEVICE) or os.path.exists("/sys/module/npu_mem")
NORMAL = acl.ACL_MEM_MALLOC_NORMAL_ONLY
GLOBAL, THREAD_LOCAL, RELAXED = 0, 1, 2          # aclmdlRICaptureMode
NONE, ACTIVE, INVALIDATED = 0, 1, 2              # aclmdlRICaptureStatus
D2D = acl.ACL_MEMCPY_DEVICE_TO_DEVICE
PERSISTENT = acl.ACL_STREAM_PERSISTENT
STREAM_CAPTURED = 107027
CAPTURE_UNMATCHED = 107036
MODEL_RUNNING = 107037
PARAM_INVALID = 100000


class Names(unittest.TestCase):
    def test_bindings_exist(self):
        for name in ("ri_capture_begin", "ri_capture_get_info",
                     "ri_capture_thread_exchange_mode", "ri_capture_end",
                     "ri_build_begin", "ri_bind_stream", "ri_end_task",
                     "ri_build_end", "ri_unbind_stream", "ri_execute",
                     "ri_execute_async", "ri_destroy"):
            self.assertTrue(callable(getattr(acl.mdl, name)), name)
        for name in ("create_label", "destroy_label", "set_label",
                     "create_label_list", "destroy_label_list",
                     "switch_label_by_index"):
            self.assertTrue(callable(getattr(acl.rt, name)), name)

    def test_exchange_mode(self):
        self.assertEqual(acl.mdl.ri_capture_thread_exchange_mode(RELAXED),
                         (GLOBAL, 0))
        self.assertEqual(acl.mdl.ri_capture_thread_exchange_mode(GLOBAL),
                         (RELAXED, 0))
        self.assertEqual(acl.mdl.ri_capture_thread_exchange_mode(9),
                         (9, PARAM_INVALID))


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

    def malloc(self, size):
        p, ret = acl.rt.malloc(size, NORMAL)
        self.assertEqual(ret, 0)
        self.addCleanup(acl.rt.free, p)
        self.assertEqual(acl.rt.memset(p, size, 0, size), 0)
        return p

    def stream(self, flag=0):
        s, ret = acl.rt.create_stream_with_config(0, flag)
        self.assertEqual(ret, 0)
        self.addCleanup(acl.rt.destroy_stream, s)
        return s

    def test_capture_and_replay(self):
        s, t = self.stream(), self.stream()
        buf, src, log = self.malloc(64), self.malloc(64), self.malloc(256)
        self.assertEqual(acl.rt.memset(src, 64, 0x21, 64), 0)
        self.assertEqual(acl.mdl.ri_capture_begin(s, GLOBAL), 0)
        status, model, ret = acl.mdl.ri_capture_get_info(s)
        self.assertEqual((status, ret), (ACTIVE, 0))
        self.assertNotEqual(model, 0)
        # The fill is in the model; the copy shows what the source holds
        # when the model runs.
        self.assertEqual(acl.rt.memset_async(buf, 64, 0x7f, 64, s), 0)
        self.assertEqual(acl.rt.memcpy_async(buf, 64, src, 1, D2D, s), 0)
        self.assertEqual(acl.rt.synchronize_stream(s), STREAM_CAPTURED)
        self.assertEqual(acl.mdl.ri_capture_end(s), (model, 0))
        self.assertEqual(acl.mdl.ri_capture_end(s), (0, CAPTURE_UNMATCHED))
        self.assertEqual(acl.rt.synchronize_stream(s), 0)
        self.assertEqual(acl.util.ptr_to_bytes(buf, 2), b"\0\0")
        for i in range(3):
            self.assertEqual(acl.rt.memset(src, 1, 0x30 + i, 1), 0)
            self.assertEqual(acl.mdl.ri_execute_async(model, t), 0)
            self.assertEqual(acl.rt.synchronize_stream(t), 0)
            self.assertEqual(acl.util.ptr_to_bytes(buf, 2),
                             bytes([0x30 + i, 0x7f]))
            self.assertEqual(acl.rt.memcpy_async(log + i, 1, buf, 1, D2D, t), 0)
        self.assertEqual(acl.mdl.ri_execute(model, -1), 0)
        self.assertEqual(acl.rt.synchronize_stream(t), 0)
        self.assertEqual(acl.util.ptr_to_bytes(log, 3), b"\x30\x31\x32")
        self.assertEqual(acl.mdl.ri_destroy(model), 0)
        self.assertEqual(acl.mdl.ri_destroy(model), PARAM_INVALID)

    def test_destroy_while_queued(self):
        s, t = self.stream(), self.stream()
        buf, word = self.malloc(64), self.malloc(64)
        self.assertEqual(acl.mdl.ri_capture_begin(s, RELAXED), 0)
        self.assertEqual(acl.rt.memset_async(buf, 64, 1, 64, s), 0)
        model, ret = acl.mdl.ri_capture_end(s)
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.value_wait(word, 1, 1, t), 0)
        self.assertEqual(acl.mdl.ri_execute_async(model, t), 0)
        self.assertEqual(acl.mdl.ri_destroy(model), MODEL_RUNNING)
        self.assertEqual(acl.rt.value_write(word, 1, 0, s), 0)
        self.assertEqual(acl.rt.synchronize_stream(t), 0)
        self.assertEqual(acl.util.ptr_to_bytes(buf, 1), b"\x01")
        self.assertEqual(acl.mdl.ri_destroy(model), 0)

    def test_labels_switch_by_index(self):
        """idx 0: fill 0xb0; idx 1: fill 0xc0; the index is read per run."""
        ps, t = self.stream(PERSISTENT), self.stream()
        buf, idx, zero = self.malloc(64), self.malloc(64), self.malloc(64)
        l1, r1 = acl.rt.create_label()
        l2, r2 = acl.rt.create_label()
        l3, r3 = acl.rt.create_label()
        self.assertEqual((r1, r2, r3), (0, 0, 0))
        both, ret = acl.rt.create_label_list([l1, l2])
        self.assertEqual(ret, 0)
        end, ret = acl.rt.create_label_list((l3,))
        self.assertEqual(ret, 0)
        self.assertEqual(acl.rt.create_label_list([]), (0, PARAM_INVALID))
        model, ret = acl.mdl.ri_build_begin(0)
        self.assertEqual(ret, 0)
        self.assertEqual(acl.mdl.ri_bind_stream(model, ps, 0), 0)
        self.assertEqual(acl.rt.switch_label_by_index(idx, 2, both, ps), 0)
        self.assertEqual(acl.rt.set_label(l1, ps), 0)
        self.assertEqual(acl.rt.memset_async(buf, 64, 0xb0, 64, ps), 0)
        self.assertEqual(acl.rt.switch_label_by_index(zero, 1, end, ps), 0)
        self.assertEqual(acl.rt.set_label(l2, ps), 0)
        self.assertEqual(acl.rt.memset_async(buf, 64, 0xc0, 64, ps), 0)
        self.assertEqual(acl.rt.set_label(l3, ps), 0)
        self.assertEqual(acl.mdl.ri_end_task(model, ps), 0)
        self.assertEqual(acl.mdl.ri_build_end(model), 0)
        for i in (0, 1, 0):
            self.assertEqual(acl.rt.memset(idx, 4, i, 1), 0)
            self.assertEqual(acl.mdl.ri_execute_async(model, t), 0)
            self.assertEqual(acl.rt.synchronize_stream(t), 0)
            self.assertEqual(acl.util.ptr_to_bytes(buf, 1),
                             b"\xc0" if i else b"\xb0")
        self.assertEqual(acl.mdl.ri_unbind_stream(model, ps), 0)
        self.assertEqual(acl.mdl.ri_destroy(model), 0)
        for lst in (both, end):
            self.assertEqual(acl.rt.destroy_label_list(lst), 0)
        for lab in (l1, l2, l3):
            self.assertEqual(acl.rt.destroy_label(lab), 0)


if __name__ == "__main__":
    unittest.main()
