#!/usr/bin/env python3
"""The router and l3fwd in instructions a packet, side by side under callgrind: the
bench's wall-clock ratio without the VM's noise (a build's code layout alone moves the
bench's Mpps by 3-5% here), and each tool's own share apart from the source and sink.

Each tool runs the bench's scenario (its pcap source, null sink, rules and config, made
the way bench.py makes them) under callgrind for --seconds, collecting only inside its
forwarding loop: the router's `Worker::run`, l3fwd's `lpm_main_loop`. Both are built on
DPDK's static archives, so the source (net_pcap's infinite RX) and the sink (net_null's
TX, which frees each mbuf) are the same code in both, and each is reported apart. The
packet count is the sink's frees. Under valgrind no AVX-512 is seen: the router's Lpm4
batch runs its scalar form (about 15-20 instructions a packet more than on a CPU with
AVX-512), l3fwd its SSE one.

Usage (after scripts/bench.sh has built l3fwd once; about 3 minutes a scenario):
  scripts/bench/tools_ir.py --scenario ipv4-small [--scenario ipv6-small] [--burst 64]
      [--router BIN] [--l3fwd BIN | --no-l3fwd] [--seconds 40] [--workdir DIR] [--json FILE]
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

import bench

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
SOURCE, SINK, FREE = "eth_pcap_rx_infinite", "eth_null_tx", "rte_pktmbuf_free"
LOOPS = {"router": "router::worker::Worker*::run", "l3fwd": "lpm_main_loop"}
NAME = re.compile(r"(c?fn)=\((\d+)\)(?: (.*))?$")


def profile_costs(lines):
    """From a callgrind profile (compressed names, as callgrind writes by default): the
    collected Ir in all, the inclusive Ir of the calls to each function, and how often
    each function was called from each caller, as {(caller, callee): calls}."""
    names, total = {}, 0
    inclusive, calls = collections.Counter(), collections.Counter()
    fn = cfn = None
    pending = None  # (callee, count) of the `calls=` line just read
    for raw in lines:
        line = raw.rstrip("\n")
        m = NAME.match(line)
        if m:
            kind, ident, name = m.groups()
            if name:
                names[ident] = name
            if kind == "fn":
                fn = names.get(ident, ident)
            else:
                cfn = names.get(ident, ident)
            continue
        if line.startswith("calls="):
            pending = (cfn, int(line[6:].split()[0]))
            continue
        if line.startswith("totals:") or line.startswith("summary:"):
            total = max(total, int(line.split()[1]))
            continue
        if pending and line[:1] in "0123456789+-*":
            callee, n = pending
            calls[(fn, callee)] += n
            inclusive[callee] += int(line.split()[-1])
            pending = None
    return total, inclusive, calls


def split(total, inclusive, calls):
    """Per packet: all, the source's RX, the sink's TX, and the tool's own (the rest)."""
    packets = calls[(SINK, FREE)]
    if packets == 0:
        raise ValueError("the sink freed no packet: did the tool forward anything?")
    rx, tx = inclusive[SOURCE], inclusive[SINK]
    return {"packets": packets, "ir": total / packets, "source": rx / packets,
            "sink": tx / packets, "own": (total - rx - tx) / packets}


def callgrind(cmd, loop, out, seconds, log, interrupt):
    """Runs `cmd` under callgrind collecting inside `loop`; stopped by SIGINT after
    `seconds` when `interrupt`, else left to stop by itself (the router's --duration)."""
    args = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
            "--toggle-collect=" + loop] + cmd
    with open(log, "w") as f:
        try:
            p = subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
            p.wait(timeout=seconds if interrupt else seconds + 600)
        except subprocess.TimeoutExpired:
            if not interrupt:
                p.kill()
                raise
            p.send_signal(2)
            p.wait(timeout=600)
    with open(out) as f:
        return split(*profile_costs(f))


def run(o, b, scen, tmp):
    pcap, routes = bench.generate(o, scen)
    rows = {}
    # bench.py's config, on EAL memory without hugepages (o.huge is false).
    cfg = b.router_config(scen, "tools-ir-%d" % os.getpid(), pcap, routes)
    cmd = [o.router, "run", "--config", cfg, "--duration", str(o.seconds)]
    rows["router"] = callgrind(cmd, LOOPS["router"], os.path.join(tmp, scen + ".router.out"),
                               o.seconds, os.path.join(o.workdir, scen + "-router-ir.log"), False)
    if scen in bench.PLAIN_IP and scen not in bench.FULL_VIEWS and o.l3fwd:
        rules4, rules6 = bench.l3fwd_rules(o, scen, routes)
        cmd = b.l3fwd_cmd("tools-ir-l3fwd-%d" % os.getpid(), pcap, rules4, rules6)
        rows["l3fwd"] = callgrind(cmd, LOOPS["l3fwd"], os.path.join(tmp, scen + ".l3fwd.out"),
                                  o.seconds, os.path.join(o.workdir, scen + "-l3fwd-ir.log"),
                                  True)
    return rows


def table(results):
    out = ["| scenario | tool | packets | Ir/pkt | source RX | sink TX | own | l3fwd / router |",
           "|---|---|---|---|---|---|---|---|"]
    for scen, rows in results.items():
        for tool, r in rows.items():
            ratio = "-"
            if tool == "router" and "l3fwd" in rows:
                ratio = "%.2f" % (rows["l3fwd"]["ir"] / r["ir"])
            out.append("| %s | %s | %d | %.1f | %.1f | %.1f | %.1f | %s |" % (
                scen, tool, r["packets"], r["ir"], r["source"], r["sink"], r["own"], ratio))
    return "\n".join(out)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scenario", action="append", required=True, choices=bench.ALL_SCENARIOS)
    p.add_argument("--router", default=os.path.join(REPO, "target/release/mplsrouter"))
    p.add_argument("--l3fwd", help="l3fwd-static (default: scripts/bench.sh's build for "
                                   "--burst, if there); the full views are left out "
                                   "(loading them under valgrind takes hours)")
    p.add_argument("--no-l3fwd", action="store_true", help="the router alone")
    p.add_argument("--burst", type=int, default=32, help="the router's burst_size (32)")
    p.add_argument("--seconds", type=int, default=40, help="each tool's run (40)")
    p.add_argument("--workdir", default=os.path.join(REPO, "target/bench/tools-ir"))
    p.add_argument("--count", type=int, default=4096)
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--prefixes", default=os.path.join(REPO, "../shared/data/ipv4-fullview-2023.txt.gz"))
    p.add_argument("--prefixes6", default=os.path.join(REPO, "../shared/data/ipv6-fullview-2023.txt.gz"))
    p.add_argument("--json")
    o = p.parse_args(argv)
    if o.no_l3fwd:
        o.l3fwd = None
    elif o.l3fwd is None:
        built = os.path.join(REPO, "target/bench/l3fwd-b%d/src/build/l3fwd-static" % o.burst)
        o.l3fwd = built if os.path.exists(built) else None
    # What bench.Bench reads of the options: one worker, EAL memory without hugepages
    # (valgrind), 3 GiB of it (l3fwd's patched LPM tables do not fit in 512 MiB).
    o.workers, o.lcores, o.share_cpus, o.huge, o.memory_mb = 1, None, False, False, 3072
    return o


def main(argv):
    o = parse_args(argv)
    os.makedirs(o.workdir, exist_ok=True)
    if not o.l3fwd and not o.no_l3fwd:
        print("tools_ir: no l3fwd-static for burst %d (scripts/bench.sh --burst %d builds it);"
              " the router alone" % (o.burst, o.burst), file=sys.stderr)
    b = bench.Bench(o)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for scen in o.scenario:
            results[scen] = run(o, b, scen, tmp)
            print(table({scen: results[scen]}), flush=True)
    print(table(results))
    if o.json:
        with open(o.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
