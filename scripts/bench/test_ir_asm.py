"""Unit tests of ir_asm.py on a made-up callgrind profile and disassembly.
`python3 -m unittest discover -s scripts/bench`."""

import unittest

import ir_asm

PROFILE = """\
# callgrind format
positions: instr line
events: Ir
fn=net::pipeline::Pipeline::process
0x1000 10 64
0x1004 10 64
cfn=net::fib::lpm4::batch::lookup
calls=2 0x2000 5
0x1008 11 6400
0x100c 12 32
fn=worker_ir::poll_once
0x3000 20 2
0x1004 10 64
"""

DISASSEMBLY = """\
0000000000001000 <net::pipeline::Pipeline::process>:
    1000:\tmov    (%rax),%rdx
    1004:\tcmp    %rdx,%rcx
    1008:\tcall   2000 <lookup>
    100c:\tjne    1000 <net::pipeline::Pipeline::process>
    1010:\tret
"""


class Counts(unittest.TestCase):
    def test_a_call_lines_inclusive_cost_is_not_the_instructions_own(self):
        c = ir_asm.instruction_counts(PROFILE.splitlines())
        self.assertEqual(c[0x1008], 0)
        self.assertEqual(c[0x100c], 32)

    def test_counts_add_up_over_functions_unless_filtered(self):
        self.assertEqual(ir_asm.instruction_counts(PROFILE.splitlines())[0x1004], 128)
        only = ir_asm.instruction_counts(PROFILE.splitlines(), "net::pipeline")
        self.assertEqual(only[0x1004], 64)
        self.assertNotIn(0x3000, only)


class Listing(unittest.TestCase):
    def test_rates_per_packet_and_gaps_between_runs(self):
        c = ir_asm.instruction_counts(PROFILE.splitlines())
        lines, total = ir_asm.listing(c, DISASSEMBLY, 32, 1.0)
        self.assertEqual(lines[0].split(), ["2.00", "1000:", "mov", "(%rax),%rdx"])
        self.assertEqual(lines[1].split()[0], "4.00")
        # 0x1008 ran its call, not itself, so it is left out: a gap before 0x100c.
        self.assertEqual(lines[2], "")
        self.assertEqual(lines[3].split()[:2], ["1.00", "100c:"])
        self.assertEqual(total, 7.0)

    def test_below_the_minimum_is_left_out(self):
        c = ir_asm.instruction_counts(PROFILE.splitlines())
        lines, total = ir_asm.listing(c, DISASSEMBLY, 32, 3.0)
        self.assertEqual([l.split()[1] for l in lines], ["1004:"])
        self.assertEqual(total, 4.0)


ADDR2LINE = """\
0x0000000000001000
core::slice::<impl [T]>::get
/rustc/abc/library/core/src/slice/mod.rs:576
net::pipeline::fast::ipv4_input
/work/main/crates/net/src/pipeline/fast.rs:180
net::pipeline::Pipeline::process
/work/main/crates/net/src/pipeline/mod.rs:487
0x0000000000001004
net::pipeline::Pipeline::process
/work/main/crates/net/src/pipeline/mod.rs:?
0x0000000000001008
core::ptr::drop_in_place
/rustc/abc/library/core/src/ptr/mod.rs:523
"""


class BySource(unittest.TestCase):
    def test_the_innermost_frame_outside_the_standard_library(self):
        places = ir_asm.parse_addr2line(ADDR2LINE)
        self.assertEqual(places[0x1000], ("net::pipeline::fast::ipv4_input",
                                          "/work/main/crates/net/src/pipeline/fast.rs", 180))
        # A line addr2line does not know is 0 (compiler-made code: spills, jumps).
        self.assertEqual(places[0x1004][2], 0)
        # Only the standard library: its innermost frame.
        self.assertEqual(places[0x1008][1], "/rustc/abc/library/core/src/ptr/mod.rs")

    def test_rates_sum_by_place_and_unknown_addresses_are_kept(self):
        places = ir_asm.parse_addr2line(ADDR2LINE)
        counts = {0x1000: 64, 0x1004: 32, 0x1009: 32, 0x100c: 96}
        rates = ir_asm.by_source(counts, places, 32)
        self.assertEqual(rates[places[0x1000]], 2.0)
        self.assertEqual(rates[("?", "?", 0)], 4.0)
        self.assertEqual(sum(rates.values()), 7.0)

    def test_table_costliest_first_and_the_rest_summed(self):
        rates = {("a::f", "/r/x.rs", 3): 1.0, ("a::g", "/r/y.rs", 9): 5.0,
                 ("a::h", "/r/z.rs", 1): 0.25, ("a::i", "/r/z.rs", 2): 0.25}
        lines = ir_asm.source_table(rates, 0.5, "/r")
        self.assertEqual(lines[0].split()[:3], ["5.00", "y.rs:9", "a::g"])
        self.assertEqual(lines[1].split()[:2], ["1.00", "x.rs:3"])
        self.assertEqual(lines[2].split()[:2], ["0.50", "(places"])
        self.assertEqual(len(lines), 3)


if __name__ == "__main__":
    unittest.main()
