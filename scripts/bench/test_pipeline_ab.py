"""Unit tests of pipeline_ab.py on made-up benchmark output and fake binaries.
`python3 -m unittest discover -s scripts/bench`."""

import contextlib
import io
import json
import os
import stat
import tempfile
import unittest

import pipeline_ab

OUT = """\
Gnuplot not found, using plotters backend
tsc      mpls_swap: min   19.2  median   20.3 TSC cycles/packet
tsc   ipv4_forward: min   25.9  median   40.0 TSC cycles/packet
tsc       6pe_push: min   83.3  median   88.5 TSC cycles/packet
"""


def fake(dirname, name, log, figures):
    """An executable that logs its name and prints `figures` ({case: (min, median)})."""
    path = os.path.join(dirname, name)
    lines = "".join(f"echo 'tsc {c:>14}: min {lo:6.1f}  median {med:6.1f} TSC cycles/packet'\n"
                    for c, (lo, med) in figures.items())
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\necho {name} \"$PIPELINE_ROUNDS\" \"$@\" >> {log}\n{lines}")
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path


class Parse(unittest.TestCase):
    def test_reads_every_tsc_line_and_nothing_else(self):
        self.assertEqual(pipeline_ab.parse(OUT), {"mpls_swap": (19.2, 20.3),
                                                  "ipv4_forward": (25.9, 40.0),
                                                  "6pe_push": (83.3, 88.5)})

    def test_no_figures_in_other_text(self):
        self.assertEqual(pipeline_ab.parse("Benchmarking pipeline_burst32/mpls_swap\n"), {})


class Measure(unittest.TestCase):
    def test_builds_alternate_within_each_run(self):
        order = []

        def runner(binary, rounds, cpu, cases):
            order.append(binary)
            return {"c": (1.0, 1.0)}

        r = pipeline_ab.measure([("a", "A"), ("b", "B")], 3, 10, None, set(), runner)
        self.assertEqual(order, ["A", "B"] * 3)
        self.assertEqual(len(r["a"]), 3)


class Table(unittest.TestCase):
    def results(self):
        return {"base": [{"x": (20.0, 21.0)}, {"x": (19.0, 30.0)}],
                "new": [{"x": (18.0, 18.5)}, {"x": (18.5, 19.0)}]}

    def test_best_minimums_compared_and_noisy_runs_flagged(self):
        t = pipeline_ab.table(self.results(), 1.15)
        row = [line for line in t.splitlines() if line.startswith("| x ")][0]
        self.assertIn("20.0, 19.0*", row)
        self.assertIn("18.0, 18.5", row)
        self.assertIn("-1.0 (-5.3%)", row)
        self.assertIn("1 of 4 figures (*)", t)

    def test_no_flag_line_when_quiet(self):
        t = pipeline_ab.table(self.results(), 2.0)
        self.assertNotIn("noisy", t)
        self.assertNotIn("*", t)


class Main(unittest.TestCase):
    def test_end_to_end_with_fake_builds(self):
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "log")
            a = fake(d, "pa", log, {"mpls_swap": (19.0, 19.5), "ipv4_forward": (26.0, 26.5)})
            b = fake(d, "pb", log, {"mpls_swap": (19.5, 19.6), "ipv4_forward": (29.0, 29.5)})
            out = io.StringIO()
            js = os.path.join(d, "r.json")
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                rc = pipeline_ab.main([f"base={a}", f"x8={b}", "--runs", "2", "--rounds",
                                       "7", "--cpu", "-1", "--case", "ipv4_forward",
                                       "--json", js])
            self.assertEqual(rc, 0)
            with open(log) as f:
                calls = f.read().split("\n")
            self.assertEqual([c.split()[0] for c in calls if c], ["pa", "pb", "pa", "pb"])
            self.assertIn("pa 7 --bench nomatch", calls[0])
            text = out.getvalue()
            self.assertIn("| ipv4_forward | 26.0, 26.0 | 29.0, 29.0 | +3.0 (+11.5%) |", text)
            self.assertNotIn("mpls_swap", text)
            with open(js) as f:
                saved = json.load(f)
            self.assertEqual(saved["runs"]["x8"][1], {"ipv4_forward": [29.0, 29.5]})

    def test_a_build_without_figures_stops_the_comparison(self):
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "log")
            a = fake(d, "pa", log, {"c": (1.0, 1.0)})
            b = fake(d, "pb", log, {})
            with contextlib.redirect_stderr(io.StringIO()), \
                    self.assertRaises(SystemExit) as e:
                pipeline_ab.main([f"a={a}", f"b={b}", "--runs", "1", "--cpu", "-1"])
            self.assertIn("no TSC figures", str(e.exception.code))

    def test_one_build_or_a_missing_binary_is_refused(self):
        for argv in (["a=/bin/true"], ["a=/bin/true", "b=/nonexistent"],
                     ["a=/bin/true", "a=/bin/true"]):
            with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as e:
                pipeline_ab.main(argv)
            self.assertEqual(e.exception.code, 2, argv)


if __name__ == "__main__":
    unittest.main()
