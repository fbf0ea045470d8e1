# SPDX-License-Identifier: MIT
"""The Python samples (samples/python/) in orders of events that a fast
host rarely shows, forced by wrapping the acl module from a sitecustomize.

    PYTHONPATH=build/python python3 -m unittest -v tests/python/test_samples.py
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD_PY = os.path.join(TOP, "build", "python")
DEVICE = os.environ.get("NPU_MEM_DEVICE") or "/dev/npu-mem"
HAVE_DEVICE = os.path.exists(DEVICE) or os.path.exists("/sys/module/npu_mem")
# Generous: the guest runs under TCG, maybe beside other guests.  The
# sample ends as soon as it is done; only a hang takes this long.
LONG = 180

# CANN's callback flow starts the report thread, then subscribes it (the
# main thread needs its id first), so the thread's first process_report
# may come before the subscription.  This makes it come first, every time:
# subscribe_report waits until the report thread has asked once.
LATE_SUBSCRIBE = textwrap.dedent("""\
    import threading
    import acl

    asked = threading.Event()
    process_report = acl.rt.process_report
    subscribe_report = acl.rt.subscribe_report

    def first_asks(timeout):
        ret = process_report(timeout)
        asked.set()
        return ret

    def late(thread_id, stream):
        if not asked.wait(120):
            raise SystemExit("the report thread never called process_report")
        return subscribe_report(thread_id, stream)

    acl.rt.process_report = first_asks
    acl.rt.subscribe_report = late
    """)


@unittest.skipUnless(HAVE_DEVICE, f"{DEVICE} absent: npu_mem module not loaded")
class LateSubscribe(unittest.TestCase):
    def test_callback_report_report_thread_asks_first(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "sitecustomize.py"), "w") as f:
                f.write(LATE_SUBSCRIBE)
            env = dict(os.environ, PYTHONPATH=f"{d}:{BUILD_PY}")
            try:
                out = subprocess.run(
                    [sys.executable,
                     os.path.join(TOP, "samples", "python", "callback_report.py")],
                    env=env, capture_output=True, text=True, timeout=LONG)
            except subprocess.TimeoutExpired:
                self.fail(f"callback_report.py hung for {LONG} s when its "
                          "report thread asked before it was subscribed")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("PASS callback_report.py", out.stdout)


if __name__ == "__main__":
    unittest.main()
