"""Unit tests of the bench helpers that need no DPDK: the router-line parser, the l3fwd
rule conversion and the aggregation. `python3 -m unittest discover -s scripts/bench`;
tests/suites/bench_smoke.sh runs them before the live smoke run."""

import io
import json
import os
import tempfile
import unittest

import bench
import punt_mix
import report
import routes2l3fwd


def router_line(t, out_tx):
    return ("[%7.1fs] in rx %.3f tx 0.000 Mpps | out rx 0.000 tx %.3f Mpps | forwarded 1 "
            "(%.3f Mpps) dropped 0 [none] slow-path 0" % (t, out_tx, out_tx, out_tx))


class OwnRate(unittest.TestCase):
    def test_uses_only_intervals_after_warmup_and_within_the_window(self):
        lines = ["EAL: noise"] + [router_line(t, r) for t, r in
                                  [(1, 1.0), (2, 2.0), (3, 10.0), (4, 20.0), (5, 99.0)]]
        # warm-up 2 s, measure 2 s: intervals (2,3] and (3,4] -> (10 + 20) / 2
        self.assertAlmostEqual(bench.own_rate("\n".join(lines), 2.0, 2.0), 15.0)

    def test_weights_uneven_intervals_by_their_length(self):
        lines = [router_line(1.0, 5.0), router_line(2.0, 10.0), router_line(2.5, 40.0)]
        # window (1, 2.5]: 10 Mpps for 1 s, 40 Mpps for 0.5 s
        self.assertAlmostEqual(bench.own_rate("\n".join(lines), 1.0, 1.5), 20.0)

    def test_none_without_lines(self):
        self.assertIsNone(bench.own_rate("--- mplsrouter stopped after 3.0s ---\n", 1, 2))


ROUTES = """# Generated
neighbors:
  - {ip: 10.0.0.2, mac: "02:00:00:00:00:02"}
  - {ip: 10.0.1.2, mac: "02:00:00:00:01:02"}
ipv4:
  - {prefix: 100.0.0.0/16, via: 10.0.1.2}
  - {prefix: 192.0.2.0/24, via: 10.0.0.2}
prefix_groups:
  - via: 10.0.1.3
    prefixes: |
      1.0.0.0/24
      223.255.252.0/22
"""


class SummaryCycles(unittest.TestCase):
    LINE = ("workers: received 9 forwarded 9 tx-refused 0 dropped 0 [none] slow-path 0 "
            "slow-path-queue-full 0 (control 0) generated 0 busy cycles/pkt 134.4 "
            "forwarding cycles/pkt 36.8 (full bursts 3216342 p10 22.25 p50 35.00)")

    def test_busy_forwarding_and_the_full_bursts_p10(self):
        self.assertEqual(bench.summary_cycles("x\n" + self.LINE + "\n"), (134.4, 36.8, 22.25))

    def test_an_older_build_has_no_p10(self):
        old = self.LINE.split(" (full")[0]
        self.assertEqual(bench.summary_cycles(old), (134.4, 36.8, None))
        self.assertEqual(bench.summary_cycles(""), (None, None, None))


class Burst(unittest.TestCase):
    def config(self, *extra):
        with tempfile.TemporaryDirectory() as d:
            o = bench.parse_args(["--router", "r", "--testpmd", "t", "--repo", ".",
                                  "--workdir", d, "--prefixes", "p", *extra])
            path = bench.Bench(o).router_config("ipv4-small", "fp", "x.pcap", "routes.yaml")
            with open(path) as f:
                return f.read().splitlines()

    def test_the_router_gets_the_burst_every_tool_runs(self):
        self.assertIn("burst_size: 32", self.config())
        self.assertIn("burst_size: 64", self.config("--burst", "64"))
        self.assertNotIn("burst_size: 32", self.config("--burst", "64"))


class Lcores(unittest.TestCase):
    def test_placement_and_l3fwd_workers(self):
        self.assertEqual(bench.lcores_override("0@0,1@0,2@1", 2), ("0@0,1@0,2@1", "1@0,2@1"))
        self.assertEqual(bench.lcores_override("0@0,1@0", 1), ("0@0,1@0", "1@0"))

    def test_refuses_a_wrong_count_or_order(self):
        for spec in ("0@0,1@1", "0@0,2@1,1@1", "0@0,1@x,2@1", "0,1,2"):
            with self.assertRaises(ValueError):
                bench.lcores_override(spec, 2)


class L3fwdPool(unittest.TestCase):
    def test_the_default_pcap_fits_and_the_largest_count_is_the_edge(self):
        self.assertLess(bench.l3fwd_mbufs_needed(4096, 1), bench.L3FWD_POOL)
        for workers in (1, 2, 8):
            edge = bench.max_l3fwd_count(workers)
            self.assertLessEqual(bench.l3fwd_mbufs_needed(edge, workers), bench.L3FWD_POOL)
            self.assertGreater(bench.l3fwd_mbufs_needed(edge + 1, workers), bench.L3FWD_POOL)

    def test_a_pcap_as_large_as_the_pool_is_refused_with_what_to_give(self):
        # 65,536 frames took the whole pool: l3fwd forwarded nothing, and the bench waited
        # out its 30-minute startup timeout (session 25).
        self.assertIsNone(bench.l3fwd_pool_error(4096, 1))
        why = bench.l3fwd_pool_error(65536, 1)
        self.assertIn("--count 65536", why)
        self.assertIn("at most --count %d" % bench.max_l3fwd_count(1), why)
        self.assertIn("--no-l3fwd", why)


ROUTES6 = """neighbors:
  - {ip: "2001:db8::2", mac: "02:00:00:00:00:02"}
ipv6:
  - {prefix: "2001:db8:ffff::/48", via: "2001:db8::2"}
  - {prefix: 2001:db8:1000::/48, via: 2001:db8:1::2}
prefix_groups:
  - via: "2001:db8:1::3"
    prefixes: |
      2001:200::/32
      2c0f:ffd0::/48
  - via: 10.0.0.2
    prefixes: |
      1.0.0.0/24
"""


class Rules(unittest.TestCase):
    def convert(self, text, six=False):
        with tempfile.TemporaryDirectory() as d:
            src, dst = os.path.join(d, "r.yaml"), os.path.join(d, "r.rules")
            dst6 = os.path.join(d, "r.rules6") if six else None
            with open(src, "w") as f:
                f.write(text)
            n = routes2l3fwd.convert(src, dst, dst6)
            with open(dst) as f:
                lines = f.read().splitlines()
            if six:
                with open(dst6) as f:
                    return n, lines, f.read().splitlines()
            return n, lines

    def test_every_route_to_the_port_of_its_next_hop(self):
        n, lines = self.convert(ROUTES)
        self.assertEqual(n, {4: 4, 6: 0})
        self.assertEqual(lines, ["R100.0.0.0/16 1", "R192.0.2.0/24 0",
                                 "R1.0.0.0/24 1", "R223.255.252.0/22 1"])

    def test_ipv6_routes_to_their_own_file(self):
        n, lines4, lines6 = self.convert(ROUTES6, six=True)
        self.assertEqual(n, {4: 1, 6: 4})
        self.assertEqual(lines4, ["R1.0.0.0/24 0"])
        self.assertEqual(lines6, ["R2001:db8:ffff::/48 0", "R2001:db8:1000::/48 1",
                                  "R2001:200::/32 1", "R2c0f:ffd0::/48 1"])
        with self.assertRaises(routes2l3fwd.RoutesError):
            self.convert(ROUTES6)  # no IPv6 rule file to put them in

    def test_refuses_what_l3fwd_cannot_do(self):
        for bad in ["ipv4:\n  - {prefix: 1.0.0.0/8, via: 10.0.1.2, push: [16]}\n",
                    "ipv4:\n  - prefix: 1.0.0.0/8\n    nexthops:\n      - {via: 10.0.1.2}\n",
                    "mpls:\n  - {in_label: 16, action: pop, via: 10.0.1.2}\n",
                    'ipv6:\n  - {prefix: "2001:db8:2000::/48", via: 10.0.1.3, push: [3000, 6000]}\n',
                    "neighbors:\n  - {ip: 10.0.1.2, mac: \"02:00:00:00:01:02\"}\n"]:
            with self.assertRaises(routes2l3fwd.RoutesError, msg=bad):
                self.convert(bad)


class Report(unittest.TestCase):
    def test_median_range_and_not_applicable(self):
        samples = {"router_mpps": [3.0, 1.0, 2.0], "testpmd_io_mpps": [4.0, 4.0, 4.0],
                   "source_rx_mpps": [5.0, None, 6.0], "router_cycles_per_packet": [],
                   "testpmd_io_cycles_per_packet": [100.0, 100.0, 100.0]}
        r = report.scenario_result("s", samples, 3, {"l3fwd_mpps": False})
        self.assertEqual((r["router_mpps"], r["router_mpps_min"], r["router_mpps_max"]),
                         (2.0, 1.0, 3.0))
        self.assertEqual(r["source_rx_mpps"], 5.5)
        self.assertIsNone(r["l3fwd_mpps"])
        self.assertIsNone(r["router_cycles_per_packet"])
        self.assertEqual(r["router_vs_testpmd_io"], 0.5)
        row = report.table([r]).splitlines()[2]
        self.assertIn("2.00 (1.00-3.00)", row)
        self.assertIn("n/a", row)      # l3fwd does not apply
        self.assertIn("FAILED", row)   # cycles should have been measured
        json.dumps(r)  # serialisable as is


class PuntMix(unittest.TestCase):
    def test_half_good_half_bad_of_each_kind(self):
        for scen in punt_mix.SCENARIOS:
            fr = punt_mix.frames(scen, 64)
            self.assertEqual(len(fr), 64)
            self.assertTrue(all(len(f) == 60 for f in fr))
            good = fr[0::2]
            self.assertTrue(all(f[30] == 100 and f[22] == 64 for f in good), scen)
        arp = punt_mix.frames("punt-arp", 4)[1]
        self.assertEqual(arp[12:14], b"\x08\x06")
        ttl1 = punt_mix.frames("punt-ttl1", 4)[1]
        self.assertEqual(ttl1[22], 1)
        ip = punt_mix.frames("punt-echo", 4)[1][14:34]
        self.assertEqual(punt_mix._csum(ip), 0, "a valid IPv4 header checksum")

    def test_ratios_to_the_no_route_mix(self):
        res = [{"name": "punt-noroute", "router_mpps": 8.0, "router_cycles_per_packet": 130.0},
               {"name": "punt-glean", "router_mpps": 7.6, "router_cycles_per_packet": 143.0},
               {"name": "punt-ttl1", "router_mpps": None, "router_cycles_per_packet": None}]
        report.add_punt_ratios(res)
        self.assertEqual(res[1]["punt_good_vs_noroute"], 0.95)
        self.assertEqual(res[1]["punt_cycles_vs_noroute"], 1.1)
        self.assertIsNone(res[2]["punt_good_vs_noroute"])


class Compare(unittest.TestCase):
    """--compare: other router binaries in the same runs as the router."""

    def test_order_rotates_run_by_run(self):
        labels = [None, "base", "old"]
        self.assertEqual(bench.router_order(labels, 1), [None, "base", "old"])
        self.assertEqual(bench.router_order(labels, 2), ["base", "old", None])
        self.assertEqual(bench.router_order(labels, 4), [None, "base", "old"])

    def test_label_and_binary_are_checked(self):
        with tempfile.TemporaryDirectory() as d:
            exe = os.path.join(d, "mplsrouter")
            with open(exe, "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(exe, 0o755)
            self.assertEqual(bench.parse_compare("base=" + exe), ("base", exe))
            for bad in ("base", "=" + exe, "a b=" + exe, "base=" + os.path.join(d, "none"),
                        "base=" + d):
                with self.assertRaises(ValueError, msg=bad):
                    bench.parse_compare(bad)

    def test_rows_share_the_sitting_and_keep_their_own_router_figures(self):
        calls = []

        class FakeBench:
            def testpmd(self, scen, run, pcap, mode):
                calls.append((run, mode))
                return (10.0 + run, None) if mode == "rxonly" else (8.0, 50.0)

            def l3fwd(self, scen, run, pcap, r4, r6):
                calls.append((run, "l3fwd"))
                return 6.0

            def router(self, scen, run, pcap, routes, binary=None, tool="router"):
                calls.append((run, tool))
                rate = {"/bin/new": 3.0, "/bin/old": 2.0}[binary]
                # The old build predates the stage histogram: no p10.
                p10 = 2.0 / rate if binary == "/bin/new" else None
                return rate, rate, 100.0 / rate, 10.0 / rate, p10

            def drop_kept(self):
                pass

        o = bench.parse_args(["--router", "/bin/new", "--testpmd", "t", "--l3fwd", "l",
                              "--repo", ".", "--workdir", ".", "--prefixes", "p",
                              "--runs", "2"])
        o.compare = [("old", "/bin/old")]
        saved = bench.generate, bench.l3fwd_rules, bench.log
        bench.generate = lambda o, scen: ("x.pcap", "x.yaml")
        bench.l3fwd_rules = lambda o, scen, routes: ("r4", "r6")
        bench.log = lambda msg: None
        try:
            new, old = bench.run_scenario(FakeBench(), o, "ipv4-small")
        finally:
            bench.generate, bench.l3fwd_rules, bench.log = saved
        self.assertEqual(calls, [(1, "rxonly"), (1, "io"), (1, "l3fwd"), (1, "router"),
                                 (1, "router@old"), (2, "rxonly"), (2, "io"), (2, "l3fwd"),
                                 (2, "router@old"), (2, "router")])
        self.assertEqual((new["name"], old["name"]), ("ipv4-small", "ipv4-small@old"))
        self.assertEqual((new["router_label"], old["router_label"]), (None, "old"))
        self.assertEqual((new["router_mpps"], old["router_mpps"]), (3.0, 2.0))
        self.assertEqual((new["router_cycles_per_packet"], old["router_cycles_per_packet"]),
                         (33.333, 50.0))
        for r in (new, old):
            self.assertEqual(r["l3fwd_mpps"], 6.0)
            self.assertEqual(r["source_rx_mpps"], 11.5)
            self.assertEqual(r["samples"]["testpmd_io_mpps"], [8.0, 8.0])
        self.assertEqual((new["router_vs_l3fwd"], old["router_vs_l3fwd"]), (0.5, 0.333))
        p10 = "router_forwarding_p10_cycles_per_packet"
        self.assertEqual((new[p10], old[p10]), (0.667, None))
        self.assertEqual((new["applicable"][p10], old["applicable"][p10]), (True, False))
        table = report.table([new, old])
        self.assertIn("fwd p10 cyc/pkt", table)
        self.assertNotIn("FAILED", table)


if __name__ == "__main__":
    unittest.main()
