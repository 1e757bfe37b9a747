#!/usr/bin/env python3
"""Before/after with the pipeline microbenchmark, alternated: two or more builds of
`crates/net/benches/pipeline.rs` run in turn (A B A B ...), each run's TSC figures
parsed, and one table of each case's minimum cycles a packet per run and build.

Why: on a shared VM the host's load comes and goes within minutes, so one run of each
build, one after the other, compares two different hosts. Alternating puts both builds
in every window, and a run whose median strays far above its minimum is flagged as
measured in a noisy window. Compare the minimums (the bench's own advice).

Build each binary before changing the code, and copy it away (cargo reuses the path):

  cargo bench -p net --bench pipeline --no-run    # prints target/release/deps/pipeline-HASH
  cp target/release/deps/pipeline-HASH /tmp/pb-base
  ... change the code, build again, copy to /tmp/pb-new ...
  scripts/bench/pipeline_ab.py base=/tmp/pb-base new=/tmp/pb-new --runs 3

The benchmark calls `Pipeline::process_burst` on bursts of 32 (`ipv6_forward` and
`6pe_push` therefore meet the IPv4 loop first, which the worker's IPv6-first entry
skips). It measures the pipeline alone, without DPDK; `scripts/bench.sh --compare`
measures the router.
"""

import argparse
import json
import os
import re
import subprocess
import sys

LINE = re.compile(r"^tsc\s+(\S+):\s+min\s+([0-9.]+)\s+median\s+([0-9.]+)\s+TSC cycles/packet")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parse(text):
    """{case: (min, median)} from one run's output, in the order printed."""
    out = {}
    for line in text.splitlines():
        m = LINE.match(line.strip())
        if m:
            out[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    return out


def label_binary(spec):
    label, sep, path = spec.partition("=")
    if not sep or not label or not path:
        raise argparse.ArgumentTypeError(f"expected LABEL=BINARY, got {spec!r}")
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise argparse.ArgumentTypeError(f"{path}: not an executable file")
    return label, os.path.abspath(path)


def run_once(binary, rounds, cpu, cases):
    env = dict(os.environ, PIPELINE_ROUNDS=str(rounds))
    env.pop("PIPELINE_CASE", None)
    cmd = ([binary, "--bench", "nomatch"] if cpu is None
           else ["taskset", "-c", str(cpu), binary, "--bench", "nomatch"])
    p = subprocess.run(cmd, cwd=os.path.join(ROOT, "crates", "net"), env=env,
                       capture_output=True, text=True, timeout=600)
    figures = parse(p.stdout)
    if p.returncode != 0 or not figures:
        sys.exit(f"pipeline_ab: {binary} exited {p.returncode} with no TSC figures:\n"
                 f"{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return {c: v for c, v in figures.items() if not cases or c in cases}


def measure(builds, runs, rounds, cpu, cases, runner=run_once, progress=None):
    """{label: [figures of run 1, run 2, ...]}, the builds alternated within each run."""
    results = {label: [] for label, _ in builds}
    for r in range(runs):
        for label, binary in builds:
            results[label].append(runner(binary, rounds, cpu, cases))
            if progress:
                progress(f"pipeline_ab: run {r + 1}/{runs} {label} done")
    return results


def summarise(results, noisy):
    """Rows of (case, {label: (mins, best, noisy runs)}) and the count of noisy runs."""
    labels = list(results)
    cases = []
    for runs in results.values():
        for figures in runs:
            cases += [c for c in figures if c not in cases]
    rows, flagged, total = [], 0, 0
    for case in cases:
        per = {}
        for label in labels:
            pairs = [f[case] for f in results[label] if case in f]
            mins = [lo for lo, _ in pairs]
            bad = [med > noisy * lo for lo, med in pairs]
            flagged += sum(bad)
            total += len(pairs)
            per[label] = (mins, min(mins) if mins else None, bad)
        rows.append((case, per))
    return rows, flagged, total


def table(results, noisy):
    rows, flagged, total = summarise(results, noisy)
    labels = list(results)
    first = labels[0]
    head = ["case"] + [f"{lab} (min of each run)" for lab in labels] + [
        f"{lab} vs {first}" for lab in labels[1:]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for case, per in rows:
        cells = [case]
        for label in labels:
            mins, _, bad = per[label]
            cells.append(", ".join(f"{m:.1f}{'*' if b else ''}" for m, b in zip(mins, bad))
                         or "-")
        base = per[first][1]
        for label in labels[1:]:
            best = per[label][1]
            cells.append("-" if base is None or best is None
                         else f"{best - base:+.1f} ({(best / base - 1) * 100:+.1f}%)")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Best of the runs' minimums compared (TSC cycles a packet).")
    if flagged:
        lines.append(f"{flagged} of {total} figures (*) had a median over {noisy:.2f}x "
                     "their minimum: a noisy window; repeat them in a quieter one.")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("builds", nargs="+", type=label_binary, metavar="LABEL=BINARY",
                    help="two or more builds of the pipeline benchmark; the first is the base")
    ap.add_argument("--runs", type=int, default=3, help="runs of each build (default 3)")
    ap.add_argument("--rounds", type=int, default=20000,
                    help="bursts timed per case and run (PIPELINE_ROUNDS, default 20000)")
    ap.add_argument("--cpu", type=int, default=1,
                    help="CPU to pin each run to with taskset (default 1; -1: not pinned)")
    ap.add_argument("--case", action="append", default=[],
                    help="only this case (repeatable; default all)")
    ap.add_argument("--noisy", type=float, default=1.15,
                    help="flag a figure whose median exceeds its minimum this many times "
                         "(default 1.15)")
    ap.add_argument("--json", help="also write every run's figures here")
    a = ap.parse_args(argv)
    if len(a.builds) < 2:
        ap.error("give at least two builds to compare")
    if len({label for label, _ in a.builds}) != len(a.builds):
        ap.error("each build needs its own label")
    if a.runs < 1 or a.rounds < 1:
        ap.error("--runs and --rounds must be at least 1")
    cpu = None if a.cpu < 0 else a.cpu
    results = measure(a.builds, a.runs, a.rounds, cpu, set(a.case),
                      progress=lambda s: print(s, file=sys.stderr))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"builds": dict(a.builds), "rounds": a.rounds, "cpu": cpu,
                       "runs": results}, f, indent=1)
    print(table(results, a.noisy))
    return 0


if __name__ == "__main__":
    sys.exit(main())
