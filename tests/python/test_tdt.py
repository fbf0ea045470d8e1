# SPDX-License-Identifier: MIT
"""acl.tdt: TDT channels, datasets, data items and queues (lib/python/tdt.c).

The C calls' names without their acltdt prefix, in lower case: handle =
create_channel_with_capacity(device_id, name, capacity); ret =
send_tensor(handle, dataset, timeout); item = create_data_item(tdt_type,
dims, data_type, data_ptr, size); dims, ret = get_dims_from_item(item);
qid, ret = create_queue(attr); ret_data_size, ret = dequeue_data(...).
Handles are ints, 0 where C gave NULL.  Datasets and queues need no device
file; create_queue needs a set device, so those tests are skipped where
the npu_mem module is not loaded.

    PYTHONPATH=build/python python3 -m unittest -v tests/python/test_tdt.py
"""
import ctypes
import os
import sys
import threading
import time
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "build", "python"))

import acl  # noqa: E402

DEVICE = os.environ.get("NPU_MEM_DEVICE") or "/dev/npu-mem"
HAVE_DEVICE = os.path.exists(DEVICE) or os.path.exists("/sys/module/npu_mem")
# An id that names no device: the module's device count (several NPUs in
# the multi-device guest), 1 where it cannot be asked.
NO_DEV = acl.rt.get_device_count()[0] or 1
BADP = 100000
QUEUE_FULL = 207014
QUEUE_EMPTY = 207013
FAILURE = 500001


def dataset_of(buf, dims):
    """A dataset of one int32 tensor over buf (kept alive by the caller)."""
    ds = acl.tdt.create_dataset()
    item = acl.tdt.create_data_item(acl.ACL_TENSOR_DATA_TENSOR, dims,
                                    acl.ACL_INT32, acl.util.bytes_to_ptr(buf),
                                    len(buf))
    assert ds and item
    assert acl.tdt.add_data_item(ds, item) == 0
    return ds, item


def wait_asleep(tids):
    """Poll until the thread whose native id tids gets sleeps (state S):
    blocked in the one call it makes.  Up to a minute: the event, not a
    fixed time."""
    for _ in range(60000):
        if tids:
            with open("/proc/self/task/%d/stat" % tids[0]) as f:
                if f.read().rpartition(")")[2].split()[0] == "S":
                    return
        time.sleep(0.001)
    raise AssertionError("the thread never blocked")


def drop(ds, item):
    assert acl.tdt.destroy_dataset(ds) == 0
    assert acl.tdt.destroy_data_item(item) == 0


class Constants(unittest.TestCase):
    def test_values_are_cann(self):
        self.assertEqual((acl.ACL_TENSOR_DATA_UNDEFINED,
                          acl.ACL_TENSOR_DATA_TENSOR,
                          acl.ACL_TENSOR_DATA_END_OF_SEQUENCE,
                          acl.ACL_TENSOR_DATA_ABNORMAL,
                          acl.tdt.ACL_TENSOR_DATA_SLICE_TENSOR,
                          acl.tdt.ACL_TENSOR_DATA_END_TENSOR),
                         (-1, 0, 1, 2, 3, 4))
        self.assertEqual((acl.ACL_TDT_QUEUE_PERMISSION_MANAGE,
                          acl.ACL_TDT_QUEUE_PERMISSION_DEQUEUE,
                          acl.ACL_TDT_QUEUE_PERMISSION_ENQUEUE), (1, 2, 4))
        self.assertEqual((acl.ACL_TDT_QUEUE_NAME_PTR,
                          acl.ACL_TDT_QUEUE_DEPTH_UINT32,
                          acl.ACL_TDT_NORMAL_MEM, acl.ACL_TDT_DVPP_MEM),
                         (0, 1, 0, 1))


class Channel(unittest.TestCase):
    def test_bad_arguments(self):
        self.assertEqual(acl.tdt.create_channel(NO_DEV, "c"), 0)
        self.assertEqual(acl.tdt.create_channel_with_capacity(0, "c", 0), 0)
        self.assertEqual(acl.tdt.create_channel(0, "n" * 128), 0)
        self.assertEqual(acl.tdt.send_tensor(0, 0, 0), BADP)
        self.assertEqual(acl.tdt.receive_tensor(0, 0, 0), BADP)
        self.assertEqual(acl.tdt.query_channel_size(0), (0, BADP))
        self.assertEqual(acl.tdt.get_data_item(0, 0), 0)
        self.assertEqual(acl.tdt.get_dataset_size(0), 0)
        self.assertIsNone(acl.tdt.get_dataset_name(0))
        self.assertEqual(acl.tdt.get_dims_from_item(0), ([], BADP))
        self.assertEqual(acl.tdt.create_data_item(
            acl.ACL_TENSOR_DATA_TENSOR, None, acl.ACL_INT32, 0, 4), 0)
        with self.assertRaises(TypeError):
            acl.tdt.create_data_item(0, "12", acl.ACL_INT32, 0, 0)

    def test_round_trip_in_order(self):
        ch = acl.tdt.create_channel_with_capacity(0, "py", 2)
        self.assertNotEqual(ch, 0)
        sent = []
        for i in range(2):
            buf = bytearray((ctypes.c_int32 * 3)(i, i + 1, i + 2))
            ds, item = dataset_of(buf, [1, 3])
            self.assertEqual(acl.tdt.send_tensor(ch, ds, -1), 0)
            buf[:] = bytes(len(buf))     # the channel keeps a copy
            drop(ds, item)
            sent.append([i, i + 1, i + 2])
        self.assertEqual(acl.tdt.query_channel_size(ch), (2, 0))
        ds, item = dataset_of(bytearray(4), None)
        self.assertEqual(acl.tdt.send_tensor(ch, ds, 0), QUEUE_FULL)
        drop(ds, item)
        rx = acl.tdt.create_dataset()
        for want in sent:
            self.assertEqual(acl.tdt.receive_tensor(ch, rx, 1000), 0)
            self.assertEqual(acl.tdt.get_dataset_size(rx), 1)
            self.assertEqual(acl.tdt.get_dataset_name(rx), "")
            got = acl.tdt.get_data_item(rx, 0)
            self.assertEqual(acl.tdt.get_tensor_type_from_item(got),
                             acl.ACL_TENSOR_DATA_TENSOR)
            self.assertEqual(acl.tdt.get_data_type_from_item(got),
                             acl.ACL_INT32)
            self.assertEqual(acl.tdt.get_dim_num_from_item(got), 2)
            self.assertEqual(acl.tdt.get_dims_from_item(got), ([1, 3], 0))
            size = acl.tdt.get_data_size_from_item(got)
            self.assertEqual(size, 12)
            data = ctypes.string_at(acl.tdt.get_data_addr_from_item(got), size)
            self.assertEqual(list((ctypes.c_int32 * 3).from_buffer_copy(data)),
                             want)
        self.assertEqual(acl.tdt.receive_tensor(ch, rx, 0), QUEUE_EMPTY)
        self.assertEqual(acl.tdt.destroy_dataset(rx), 0)
        self.assertEqual(acl.tdt.destroy_channel(ch), 0)

    def test_stop_wakes_a_blocked_receiver(self):
        ch = acl.tdt.create_channel(0, "stop")
        rx = acl.tdt.create_dataset()
        got, tids = [], []

        def receive():
            tids.append(threading.get_native_id())
            got.append(acl.tdt.receive_tensor(ch, rx, -1))

        t = threading.Thread(target=receive)
        t.start()
        wait_asleep(tids)
        self.assertEqual(acl.tdt.stop_channel(ch), 0)
        t.join(60)
        self.assertFalse(t.is_alive())
        self.assertEqual(got, [FAILURE])
        self.assertEqual(acl.tdt.destroy_dataset(rx), 0)
        self.assertEqual(acl.tdt.destroy_channel(ch), 0)


@unittest.skipUnless(HAVE_DEVICE, "npu_mem module not loaded")
class Queue(unittest.TestCase):
    def setUp(self):
        self.assertEqual(acl.rt.set_device(0), 0)

    def tearDown(self):
        self.assertEqual(acl.rt.reset_device(0), 0)

    def test_attr(self):
        attr = acl.tdt.create_queue_attr()
        self.assertEqual(acl.tdt.get_queue_attr(attr, acl.ACL_TDT_QUEUE_DEPTH_UINT32),
                         (8, 0))
        self.assertEqual(acl.tdt.set_queue_attr(attr, acl.ACL_TDT_QUEUE_NAME_PTR,
                                                "q" * 128), BADP)
        self.assertEqual(acl.tdt.set_queue_attr(attr, acl.ACL_TDT_QUEUE_NAME_PTR,
                                                "queue"), 0)
        self.assertEqual(acl.tdt.get_queue_attr(attr, acl.ACL_TDT_QUEUE_NAME_PTR),
                         ("queue", 0))
        self.assertEqual(acl.tdt.set_queue_attr(attr, 9, 1), BADP)
        self.assertEqual(acl.tdt.set_queue_attr(attr, acl.ACL_TDT_QUEUE_DEPTH_UINT32, 1), 0)
        self.assertEqual(acl.tdt.create_queue(attr), (0, BADP))
        self.assertEqual(acl.tdt.destroy_queue_attr(attr), 0)
        self.assertEqual(acl.tdt.grant_queue(1, 1, 4, 0), 200006)

    def test_data_between_threads(self):
        qid, ret = acl.tdt.create_queue(0)
        self.assertEqual(ret, 0)
        n = 100

        def produce():
            for i in range(n):
                data = ctypes.c_uint32(i)
                user = ctypes.c_uint32(i * 3)
                assert acl.tdt.enqueue_data(qid, ctypes.addressof(data), 4,
                                            ctypes.addressof(user), 4, -1, 0) == 0

        t = threading.Thread(target=produce, daemon=True)
        t.start()
        out, user = ctypes.c_uint32(), ctypes.c_uint32()
        try:
            for i in range(n):
                self.assertEqual(acl.tdt.dequeue_data(
                    qid, ctypes.addressof(out), 4, ctypes.addressof(user), 4,
                    -1), (4, 0))
                self.assertEqual((out.value, user.value), (i, i * 3))
        except BaseException:
            acl.tdt.destroy_queue(qid)      # wakes the producer
            raise
        t.join(60)
        self.assertEqual(acl.tdt.dequeue_data(qid, ctypes.addressof(out), 4,
                                              0, 0, 0), (0, QUEUE_EMPTY))
        buf, ret = acl.tdt.alloc_buf(8, acl.ACL_TDT_NORMAL_MEM)
        self.assertEqual(ret, 0)
        ptr, size, ret = acl.tdt.get_buf_data(buf)
        self.assertEqual((size, ret), (8, 0))
        ctypes.memmove(ptr, b"tdtqueue", 8)
        self.assertEqual(acl.tdt.set_buf_data_len(buf, 3), 0)
        self.assertEqual(acl.tdt.enqueue(qid, buf, 0), 0)
        got, ret = acl.tdt.dequeue(qid, 0)
        self.assertEqual((got, ret), (buf, 0))
        self.assertEqual(acl.tdt.get_buf_data_len(got), (3, 0))
        self.assertEqual(acl.tdt.free_buf(got), 0)
        self.assertEqual(acl.tdt.destroy_queue(qid), 0)
        self.assertEqual(acl.tdt.destroy_queue(qid), BADP)


if __name__ == "__main__":
    unittest.main()
