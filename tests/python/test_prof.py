# SPDX-License-Identifier: MIT
"""acl.prof: profiling with pyACL's names (lib/python/prof.c).

ret = init(path); ret = finalize(); prof_config = create_config(
device_list, aicore_metrics, aicore_events, data_type_config); ret =
destroy_config(c); ret = start(c); ret = stop(c); ret = set_config(type,
config); stamp = create_stamp(); destroy_stamp(stamp); ret =
set_stamp_trace_message(stamp, msg, msg_len); ret = mark(stamp); ret =
mark_ex(msg, stream); ret = push(stamp); ret = pop(); range_id, ret =
range_start(stamp); ret = range_stop(range_id); step_info =
create_step_info(); ret = get_step_timestamp(step_info, tag, stream);
destroy_step_info(step_info).  A profiled run's trace.json is read with
Python's json.  Tests that need /dev/npu-mem are skipped where the
npu_mem module is not loaded.

    PYTHONPATH=build/python python3 -m unittest -v tests/python/test_prof.py
"""
import glob
import json
import os
import shutil
import sys
import tempfile
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "build", "python"))

import acl  # noqa: E402

DEVICE = os.environ.get("NPU_MEM_DEVICE") or "/dev/npu-mem"
HAVE_DEVICE = os.path.exists(DEVICE) or os.path.exists("/sys/module/npu_mem")

TASK_TIME, MSPROFTX = 0x0002, 0x0080
AICORE_NONE = 0xFF
NOT_RUN, REPEAT_INIT, INVALID_PARAM = 100043, 100002, 100000


class Arguments(unittest.TestCase):
    def test_types(self):
        for fn, args in [(acl.prof.init, (5,)),
                         (acl.prof.create_config, (5, AICORE_NONE, 0, 2)),
                         (acl.prof.create_config, (["0"], AICORE_NONE, 0, 2)),
                         (acl.prof.start, ("c",)),
                         (acl.prof.mark_ex, (1, 0)),
                         (acl.prof.range_stop, (-1,))]:
            with self.assertRaises((TypeError, OverflowError), msg=fn):
                fn(*args)

    def test_order_without_device(self):
        c = acl.prof.create_config([0], AICORE_NONE, 0, TASK_TIME)
        self.assertNotEqual(c, 0)
        self.assertEqual(acl.prof.create_config([], AICORE_NONE, 0, 2), 0)
        self.assertEqual(acl.prof.start(c), NOT_RUN)
        self.assertEqual(acl.prof.finalize(), NOT_RUN)
        self.assertEqual(acl.prof.start(0), INVALID_PARAM)
        d = tempfile.mkdtemp(prefix="acl_prof_py.")
        try:
            self.assertEqual(acl.prof.init(d), 0)
            self.assertEqual(acl.prof.init(d), REPEAT_INIT)
            self.assertEqual(acl.prof.set_config(1, "200MB"), 0)
            self.assertEqual(acl.prof.set_config(0, "200MB"), INVALID_PARAM)
            self.assertEqual(acl.prof.finalize(), 0)
        finally:
            shutil.rmtree(d)
        self.assertEqual(acl.prof.destroy_config(c), 0)
        stamp = acl.prof.create_stamp()
        self.assertNotEqual(stamp, 0)
        self.assertEqual(acl.prof.mark(stamp), NOT_RUN)
        self.assertEqual(acl.prof.range_start(stamp), (0, NOT_RUN))
        self.assertIsNone(acl.prof.destroy_stamp(stamp))


@unittest.skipUnless(HAVE_DEVICE, "no /dev/npu-mem")
class Trace(unittest.TestCase):
    def setUp(self):
        self.assertEqual(acl.rt.set_device(0), 0)
        self.dir = tempfile.mkdtemp(prefix="acl_prof_py.")

    def tearDown(self):
        acl.prof.finalize()
        shutil.rmtree(self.dir)
        acl.rt.reset_device(0)

    def test_run(self):
        text = 'py "quoted" \\ and\nnewline'
        stream, ret = acl.rt.create_stream()
        self.assertEqual(ret, 0)
        sid, ret = acl.rt.stream_get_id(stream)
        self.assertEqual(ret, 0)
        dev, ret = acl.rt.malloc(4096, 0)
        self.assertEqual(ret, 0)
        c = acl.prof.create_config([0], AICORE_NONE, 0, TASK_TIME | MSPROFTX)
        stamp = acl.prof.create_stamp()
        step = acl.prof.create_step_info()
        self.assertEqual(acl.prof.set_stamp_trace_message(
            stamp, text, len(text.encode())), 0)
        self.assertEqual(acl.prof.init(self.dir), 0)
        self.assertEqual(acl.prof.start(c), 0)
        rid, ret = acl.prof.range_start(stamp)
        self.assertEqual(ret, 0)
        self.assertEqual(acl.prof.push(stamp), 0)
        self.assertEqual(acl.rt.memset_async(dev, 4096, 3, 4096, stream), 0)
        self.assertEqual(acl.prof.get_step_timestamp(step, 0, stream), 0)
        self.assertEqual(acl.prof.mark_ex("py mark", stream), 0)
        self.assertEqual(acl.prof.mark(stamp), 0)
        self.assertEqual(acl.prof.pop(), 0)
        self.assertEqual(acl.prof.range_stop(rid), 0)
        self.assertEqual(acl.rt.synchronize_stream(stream), 0)
        self.assertEqual(acl.prof.stop(c), 0)
        self.assertEqual(acl.prof.finalize(), 0)

        files = glob.glob(os.path.join(self.dir, "PROF_*", "trace.json"))
        self.assertEqual(len(files), 1)
        with open(files[0]) as f:
            events = json.load(f)["traceEvents"]
        timed = [e for e in events if e["ph"] != "M"]
        self.assertEqual([e["ts"] for e in timed],
                         sorted(e["ts"] for e in timed))
        on_stream = [(e["ph"], e["name"]) for e in timed
                     if e["tid"] == sid and e["pid"] != os.getpid()]
        self.assertEqual(on_stream, [("X", "memset"), ("i", "step 0 start"),
                                     ("i", "py mark")])
        host = [(e["ph"], e["name"]) for e in timed
                if e["pid"] == os.getpid()]
        self.assertEqual(host, [("b", text), ("B", text), ("i", text),
                                ("E", ""), ("e", text)])

        acl.prof.destroy_step_info(step)
        acl.prof.destroy_stamp(stamp)
        self.assertEqual(acl.prof.destroy_config(c), 0)
        self.assertEqual(acl.rt.free(dev), 0)
        self.assertEqual(acl.rt.destroy_stream(stream), 0)


if __name__ == "__main__":
    unittest.main()
