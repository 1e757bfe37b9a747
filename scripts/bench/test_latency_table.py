"""Unit tests of latency_table.py (the table of scripts/bench/latency.sh) on made-up rows.
`python3 -m unittest discover -s scripts/bench`."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

import latency_table


def row(name, tps, p50, p99, p999, lost=0):
    return {"label": name, "transactions": int(tps * 10), "lost": lost, "seconds": 10.0,
            "trans_per_s": tps, "rtt_us": {"min": 1, "p50": p50, "p99": p99, "p999": p999,
                                           "max": p999, "mean": p50}}


class Table(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.TemporaryDirectory()
        self.out = self.d.name
        for name, r in [("router-l0-n1", row("router-l0-n1", 4000, 41, 500, 900)),
                        ("router-l2-n2", row("router-l2-n2", 2000, 46, 600, 990, lost=3)),
                        ("linux-h1-n1", row("linux-h1-n1", 26000, 14, 60, 99)),
                        ("router-l1-n1-flood", row("f", 1200, 54, 2000, 3000))]:
            with open(os.path.join(self.out, name + ".json"), "w") as f:
                json.dump(r, f)
        with open(os.path.join(self.out, "host.log"), "w") as f:
            f.write("latency: load average before: 1 2 3 (2 CPUs)\n")
        with open(os.path.join(self.out, "router-l1-n1-flood-flood.log"), "w") as f:
            f.write("udp_rr flood: 2000 sent, 0 send errors in 1.00 s = 2000 pps\n")
        with open(os.path.join(self.out, "router-l1-n1-flood-sink.log"), "w") as f:
            f.write("udp_rr sink: 1990 datagrams received\n")

    def tearDown(self):
        self.d.cleanup()

    def render(self):
        buf = io.StringIO()
        argv = sys.argv
        sys.argv = ["latency_table.py", self.out, "2000"]
        try:
            with contextlib.redirect_stdout(buf):
                latency_table.main()
        finally:
            sys.argv = argv
        return buf.getvalue()

    def test_router_rows_beside_linux_at_the_same_hops(self):
        t = self.render()
        self.assertIn("| 0 | 1 | 1 | 4000 | 41 / 500 / 900 | 1 | 26000 | 14 / 60 / 99 | pending #20 |", t)
        # No Linux two-hop row measured: dashes, and the loss is shown.
        self.assertIn("| 2 | 2 | 2 | 2000 (lost 3) | 46 / 600 / 990 | 2 | – | – | pending #20 |", t)
        # Rows the router did not measure are left out.
        self.assertFalse([l for l in t.splitlines() if l.startswith("| 1 | 1 |")], t)
        self.assertIn("load average before: 1 2 3 (2 CPUs)", t)

    def test_flood_row_names_what_was_sent_and_received(self):
        t = self.render()
        self.assertIn("| router, 1 label, 1 next hop, under flood | 1200 | 54 / 2000 / 3000 |"
                      " flood 2000 pps: 2000 sent, 1990 received |", t)
        self.assertNotIn("idle backoff", t)


if __name__ == "__main__":
    unittest.main()
