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


if __name__ == "__main__":
    unittest.main()
