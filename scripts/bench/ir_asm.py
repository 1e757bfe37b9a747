#!/usr/bin/env python3
"""Instructions a packet, instruction by instruction: the hot loop's machine code with how
often each instruction ran, from callgrind (repeatable on a loaded box) joined with
objdump's disassembly. pipeline-ir.sh and worker-ir.sh say how many instructions a case
costs; this says which ones, so that a change can be aimed at them (spills, bounds
checks, stores split in pieces) and its effect read off the same listing.

Usage:
  scripts/bench/ir_asm.py target/release/examples/pipeline_ir ipv4_forward
  scripts/bench/ir_asm.py target/release/examples/worker_ir ipv4_forward --min 0.1
  scripts/bench/ir_asm.py BIN CASE --function net::fib::lpm4 --rounds 300
  scripts/bench/ir_asm.py BIN CASE --function net:: --by-source

--by-source sums the instructions by the line of the project's source they were compiled
from (addr2line, through inlining: the innermost frame outside the standard library), so
that each check's cost can be read off by name: the budget a packet's checks spend.

Build the examples first (cargo build --release -p net --example pipeline_ir, or -p
router --example worker_ir). Counts are per packet: the example's bursts of 32 times its
rounds (pipeline_ir also runs one warm-up burst inside what is counted, as
pipeline-ir.sh assumes). Only instructions that ran at least --min times a packet are
listed; runs of listed addresses are separated by a blank line (a jump apart).
"""

import argparse
import collections
import functools
import os
import re
import subprocess
import sys
import tempfile

BURST = 32
# What each example counts: the function callgrind collects inside, and how many bursts
# a run of `rounds` puts through it.
EXAMPLES = {
    "pipeline_ir": ("pipeline_ir::run_burst*", lambda rounds: rounds + 1),
    "worker_ir": ("worker_ir::poll_once*", lambda rounds: rounds),
}
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
POSITION = re.compile(r"(0x[0-9a-f]+) \d+ (\d+)$")
DISASSEMBLY = re.compile(r"\s*([0-9a-f]+):\s+(.*)$")


def instruction_counts(lines, function=""):
    """Ir by instruction address, from a callgrind profile written with --dump-instr=yes
    --compress-pos=no --compress-strings=no, counting only functions whose name contains
    `function`. A position line right after `calls=` is the call's inclusive cost, not
    the call instruction's own, and is skipped."""
    counts = collections.Counter()
    name, after_calls = "", False
    for line in lines:
        if line.startswith("fn="):
            name = line[3:].strip()
        elif line.startswith("calls="):
            after_calls = True
            continue
        m = POSITION.match(line.strip())
        if m:
            if not after_calls and function in name:
                counts[int(m.group(1), 16)] += int(m.group(2))
            after_calls = False
    return counts


def listing(counts, disassembly, packets, minimum):
    """The lines of `disassembly` (objdump -d text) whose instruction ran at least
    `minimum` times a packet, each prefixed with that rate, and the listed rates' sum."""
    out, total, last = [], 0.0, None
    for line in disassembly.splitlines():
        m = DISASSEMBLY.match(line)
        if not m:
            continue
        address = int(m.group(1), 16)
        rate = counts.get(address, 0) / packets
        if rate < minimum:
            last = None
            continue
        if last is None and out:
            out.append("")
        out.append(f"{rate:7.2f}  {address:x}: {m.group(2)}")
        total += rate
        last = address
    return out, total


def parse_addr2line(text):
    """{address: (function, file, line)} from `addr2line -a -i -f` output: for each
    address, the innermost frame whose file is not the standard library's (/rustc/...),
    else the innermost frame. A line number addr2line does not know is 0."""
    places, address, frames = {}, None, []

    def close():
        if address is not None and frames:
            own = [f for f in frames if not f[1].startswith("/rustc/")]
            places[address] = (own or frames)[0]

    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("0x"):
            close()
            address, frames = int(lines[i], 16), []
            i += 1
            continue
        if i + 1 < len(lines):
            path, _, line = lines[i + 1].rpartition(":")
            frames.append((lines[i], path, int(line) if line.isdigit() else 0))
        i += 2
    close()
    return places


def by_source(counts, places, packets):
    """Ir a packet per (function, file, line), from per-address counts and the places
    `parse_addr2line` gave; addresses without a place go under ("?", "?", 0)."""
    rates = collections.Counter()
    for address, n in counts.items():
        rates[places.get(address, ("?", "?", 0))] += n / packets
    return rates


@functools.lru_cache(maxsize=None)
def source_lines(path):
    """A source file's lines, read once however many places it has; none when unreadable."""
    try:
        with open(path) as f:
            return f.read().splitlines()
    except OSError:
        return []


def source_text(path, line, root):
    """The source line, stripped, for the table; empty when it cannot be read."""
    lines = source_lines(path if os.path.isabs(path) else os.path.join(root, path))
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def source_table(rates, minimum, root):
    """Lines for --by-source: rate, place, function and source text, costliest first;
    places below `minimum` a packet are summed into one line."""
    out, rest = [], 0.0
    for (function, path, line), rate in sorted(rates.items(), key=lambda kv: -kv[1]):
        if rate < minimum:
            rest += rate
            continue
        where = f"{os.path.relpath(path, root) if os.path.isabs(path) else path}:{line}"
        name = function.rsplit("::", 2)
        out.append(f"{rate:7.2f}  {where:<42} {'::'.join(name[-2:]):<36} "
                   f"{source_text(path, line, root)[:70]}")
    if rest:
        out.append(f"{rest:7.2f}  (places below {minimum} a packet each)")
    return out


def locate(binary, addresses):
    args = ["addr2line", "-a", "-i", "-f", "-C", "-e", binary]
    text = "\n".join(f"{a:#x}" for a in addresses)
    run = subprocess.run(args, input=text, capture_output=True, text=True, check=True)
    return parse_addr2line(run.stdout)


def disassemble(binary, low, high):
    args = ["objdump", "-d", "--no-show-raw-insn", "-C", f"--start-address={low:#x}",
            f"--stop-address={high:#x}", binary]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


def profile(binary, toggle, case, rounds, path):
    args = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={path}", "--dump-instr=yes",
            "--compress-pos=no", "--compress-strings=no", f"--toggle-collect={toggle}", binary,
            case, str(rounds)]
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{run.stderr}{run.stdout}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("binary", help="target/release/examples/pipeline_ir or worker_ir")
    p.add_argument("case", help="a case the example knows, e.g. ipv4_forward")
    p.add_argument("--rounds", type=int, default=300, help="bursts to run (default 300)")
    p.add_argument("--min", type=float, default=0.5,
                   help="list instructions run at least this often a packet (default 0.5)")
    p.add_argument("--kind", choices=sorted(EXAMPLES),
                   help="which example the binary is (default: its file name; give it for a "
                        "copy under another name)")
    p.add_argument("--function", default="",
                   help="only functions whose name contains this (default: all)")
    p.add_argument("--by-source", action="store_true",
                   help="sum every counted instruction by its line of source instead of "
                        "listing the machine code (--min then applies to each line's sum)")
    a = p.parse_args()
    kind = a.kind or os.path.basename(a.binary)
    if kind not in EXAMPLES:
        sys.exit(f"{a.binary}: not one of the examples this reads ({', '.join(EXAMPLES)}); "
                 "name it with --kind")
    toggle, bursts = EXAMPLES[kind]
    packets = bursts(a.rounds) * BURST
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "callgrind.out")
        profile(a.binary, toggle, a.case, a.rounds, path)
        with open(path) as f:
            counts = instruction_counts(f, a.function)
    every = sum(counts.values()) / packets
    scope = f" in {a.function}" if a.function else ""
    if a.by_source:
        rates = by_source(counts, locate(a.binary, sorted(counts)), packets)
        print("\n".join(source_table(rates, a.min, REPO)))
        print(f"\n{every:.1f} instructions a packet{scope}")
        return
    hot = sorted(addr for addr, n in counts.items() if n / packets >= a.min)
    if not hot:
        sys.exit(f"no instruction ran {a.min} times a packet")
    # Past the last one by an instruction's greatest length, so that it is decoded whole.
    lines, total = listing(counts, disassemble(a.binary, hot[0], hot[-1] + 16), packets, a.min)
    print("\n".join(lines))
    print(f"\n{total:.1f} instructions a packet listed (run >= {a.min} a packet), "
          f"{every:.1f} in all{scope}")


if __name__ == "__main__":
    main()
