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
                        ("router6-l0-n1", row("router6-l0-n1", 3900, 43, 510, 910)),
                        ("router6-l1-n1", row("router6-l1-n1", 2500, 50, 700, 1200)),
                        ("linux6-h2-n1", row("linux6-h2-n1", 21000, 17, 70, 120)),
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
        self.assertIn("| IPv4 | 0 | 1 | 1 | 4000 | 41 / 500 / 900 | 1 | 26000 | 14 / 60 / 99 |", t)
        # No Linux two-hop row measured: dashes, and the loss is shown.
        self.assertIn("| IPv4 | 2 | 2 | 2 | 2000 (lost 3) | 46 / 600 / 990 | 2 | – | – |", t)
        # Rows the router did not measure are left out.
        self.assertFalse([l for l in t.splitlines() if l.startswith("| IPv4 | 1 | 1 |")], t)
        self.assertIn("load average before: 1 2 3 (2 CPUs)", t)

    def test_ipv6_rows_native_and_6pe_beside_linux_ipv6(self):
        t = self.render()
        self.assertIn("| IPv6 | 0 | 1 | 1 | 3900 | 43 / 510 / 910 | 1 | – | – |", t)
        self.assertIn("| IPv6 (6PE) | 1 | 1 | 2 | 2500 | 50 / 700 / 1200 | 2 | 21000 | 17 / 70 / 120 |", t)
        # The IPv4 Linux two-hop row is not the IPv6 one's stand-in.
        self.assertNotIn("| IPv4 | 1 | 1 |", t)
        self.assertFalse([l for l in t.splitlines() if l.startswith("| IPv6 (6PE) | 2 |")], t)
        # IPv4 rows come first.
        lines = t.splitlines()
        first6 = next(i for i, l in enumerate(lines) if l.startswith("| IPv6"))
        self.assertFalse([l for l in lines[first6:] if l.startswith("| IPv4")], t)

    def test_seed_layout_labels_by_next_hops_by_family(self):
        t = self.render()
        self.assertIn("| labels | next hops | router IPv4 trans/s | router IPv6 trans/s"
                      " | Linux IPv4 trans/s | Linux IPv6 trans/s |", t)
        self.assertIn("| 0 | 1 | 4000 | 3900 | 26000 | – |", t)
        self.assertIn("| 1 | 1 | – | 2500 | – | 21000 |", t)
        self.assertIn("| 2 | 2 | 2000 | – | – | – |", t)
        # Neither family measured 2 labels on 1 next hop: no row.
        self.assertNotIn("| 2 | 1 |", t)

    def test_flood_row_names_what_was_sent_and_received(self):
        t = self.render()
        self.assertIn("| router, 1 label, 1 next hop, under flood | 1200 | 54 / 2000 / 3000 |"
                      " flood 2000 pps: 2000 sent, 1990 received |", t)
        self.assertNotIn("idle backoff", t)

    def test_split_cpu_row_is_its_own_and_not_the_one_hop_linux_figure(self):
        with open(os.path.join(self.out, "linux-h1-n1-split.json"), "w") as f:
            json.dump(row("linux-h1-n1-split", 11000, 79, 220, 1300), f)
        t = self.render()
        self.assertIn("| Linux, 1 hop, 1 next hop, server on CPU 1 | 11000 | 79 / 220 / 1300 |  |", t)
        # The router's one-hop row still sits beside Linux on one CPU.
        self.assertIn("| 4000 | 41 / 500 / 900 | 1 | 26000 | 14 / 60 / 99 |", t)


if __name__ == "__main__":
    unittest.main()
