"""Unit tests of tools_ir.py's reading of a callgrind profile, on a made-up one.
`python3 -m unittest discover -s scripts/bench`."""

import unittest

import tools_ir

# Callgrind's default compression: a name in full the first time, by number after.
PROFILE = """\
# callgrind format
events: Ir
fl=(1) worker.rs
fn=(1) router::worker::Worker<F>::run
16 100
cfl=(2) ???
cfn=(2) eth_pcap_rx_infinite
calls=2 10
16 500
cfn=(3) eth_null_tx
calls=2 20
+1 300
fl=(2)
fn=(3)
20 10
cfn=(4) rte_pktmbuf_free
calls=60 30
+1 200
cfn=(4)
calls=4 30
* 90
fn=(2)
5 500
totals: 1100
"""


class Profile(unittest.TestCase):
    def test_calls_and_their_inclusive_cost_by_callee(self):
        total, inclusive, calls = tools_ir.profile_costs(PROFILE.splitlines(True))
        self.assertEqual(total, 1100)
        self.assertEqual(inclusive["eth_pcap_rx_infinite"], 500)
        self.assertEqual(inclusive["eth_null_tx"], 300)
        self.assertEqual(calls[("eth_null_tx", "rte_pktmbuf_free")], 64)
        self.assertEqual(calls[("router::worker::Worker<F>::run", "eth_null_tx")], 2)

    def test_per_packet_split_counts_the_sinks_frees(self):
        r = tools_ir.split(*tools_ir.profile_costs(PROFILE.splitlines(True)))
        self.assertEqual(r["packets"], 64)
        self.assertAlmostEqual(r["ir"], 1100 / 64)
        self.assertAlmostEqual(r["source"], 500 / 64)
        self.assertAlmostEqual(r["sink"], 300 / 64)
        self.assertAlmostEqual(r["own"], 300 / 64)

    def test_no_packet_out_is_an_error_not_a_division(self):
        empty = "events: Ir\nfn=(1) lpm_main_loop\n1 10\ntotals: 10\n"
        with self.assertRaises(ValueError):
            tools_ir.split(*tools_ir.profile_costs(empty.splitlines(True)))


if __name__ == "__main__":
    unittest.main()
