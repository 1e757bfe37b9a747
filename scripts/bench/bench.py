#!/usr/bin/env python3
"""Runs the router, dpdk-testpmd and l3fwd on the same pcap source and null sink, in
alternation, and reports Mpps and cycles/packet per scenario. Driven by scripts/bench.sh,
which builds the binaries first; see docs/benchmarks.md for the method.

Each measurement is one process of one tool on lcores 0 (main, idle) and 1..N (workers):
  source   testpmd --forward-mode=rxonly: what the pcap source alone delivers
  testpmd  testpmd --forward-mode=io, pcap -> null: the ceiling of this source and sink
  l3fwd    DPDK's l3fwd, LPM, the scenario's IPv4 or IPv6 routes (plain IP scenarios only)
  router   mplsrouter run with the scenario's routes (and each --compare binary, the
           routers' order rotated run by run, so that before/after share one sitting)
Throughput is the rate of one ethdev counter over a measured interval after warm-up:
packets transmitted on the sink (port 1, net_null), or received on the source (port 0)
for `source`. The counters are read through DPDK's telemetry socket at the start and end
of the interval, the same way for every tool; for the router its own once-per-second
counters line is the figure (telemetry is the cross-check and the fallback).
Stdlib only. Every process is started in its own session and killed on any exit path.
"""

import argparse
import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import punt_mix  # noqa: E402
import report  # noqa: E402
import routes2l3fwd  # noqa: E402
from dpdk_telemetry import Telemetry, runtime_dir  # noqa: E402

IPV6_SCENARIOS = ["ipv6-small", "ipv6-full", "6pe-push"]
ALL_SCENARIOS = ["mpls-swap", "mpls-php", "ler-push2", "ipv4-small", "ipv4-full",
                 "ecmp-4"] + IPV6_SCENARIOS
# Scenarios l3fwd runs too (LPM, the same prefixes to the same ports), and the full views.
PLAIN_IP = {"ipv4-small", "ipv4-full", "ipv6-small", "ipv6-full"}
FULL_VIEWS = {"ipv4-full": "prefixes", "ipv6-full": "prefixes6"}
# l3fwd needs a rule file per family; the other family gets one rule no frame matches.
PLACEHOLDER_RULE = {4: "R198.18.0.0/15 1\n", 6: "R2001:db8:eeee::/48 1\n"}
SOURCE_PORT, SINK_PORT = 0, 1
# l3fwd's mbuf pool: the floor build-l3fwd.sh patches into its NB_MBUF. net_pcap's
# infinite_rx takes one mbuf per pcap frame per queue at start; with no mbuf left for RX,
# l3fwd forwards nothing and the bench would wait out --l3fwd-startup-timeout.
L3FWD_POOL = 65536


def l3fwd_mbufs_needed(count, workers):
    """Mbufs l3fwd needs for a pcap of `count` frames on `workers` queues: the stored
    frames, with room for its rings (1024 descriptors a queue, RX and TX) and the
    per-lcore mempool caches (256, and bursts)."""
    return count * workers + 2 * 1024 * workers + 512 * (workers + 1)

LIVE = []  # processes to kill on any exit


def log(msg):
    print("bench: %s" % msg, file=sys.stderr, flush=True)


class BenchError(Exception):
    pass


class Proc:
    """A tool process in its own session (so a kill reaches its children, and only them)."""

    def __init__(self, cmd, logfile, file_prefix):
        self.cmd = cmd
        self.logfile = logfile
        self.file_prefix = file_prefix
        self.out = open(logfile, "w")
        self.out.write("+ %s\n" % " ".join(cmd))
        self.out.flush()
        # stdin stays an open pipe: testpmd without -i exits at EOF on stdin.
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=self.out,
                                  stderr=subprocess.STDOUT, start_new_session=True)
        LIVE.append(self)

    def alive(self):
        return self.p.poll() is None

    def freeze(self):
        self.p.send_signal(signal.SIGSTOP)

    def thaw(self):
        self.p.send_signal(signal.SIGCONT)

    def stop(self, grace=30.0):
        """SIGINT (each tool prints its final counters), then SIGKILL to the session."""
        if self.alive():
            self.thaw()
            try:
                self.p.send_signal(signal.SIGINT)
                self.p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                log("%s did not stop within %.0fs, killing it" % (self.cmd[0], grace))
            except ProcessLookupError:
                pass
        self.kill()

    def kill(self):
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if self.p.stdin:
            try:
                self.p.stdin.close()
            except OSError:
                pass
        self.out.close()
        if self in LIVE:
            LIVE.remove(self)
        cleanup_runtime(self.file_prefix)

    def output(self):
        with open(self.logfile, errors="replace") as f:
            return f.read()

    def tail(self, n=15):
        return "\n".join(self.output().splitlines()[-n:])


def cleanup_runtime(file_prefix):
    """Removes what an EAL with this (unique, ours) prefix may leave behind when killed."""
    shutil.rmtree(runtime_dir(file_prefix), ignore_errors=True)
    for d in ("/dev/hugepages", "/mnt/huge"):
        try:
            for name in os.listdir(d):
                if name.startswith(file_prefix + "map_"):
                    os.unlink(os.path.join(d, name))
        except OSError:
            pass


def kill_all():
    for p in list(LIVE):
        p.kill()


def on_signal(signum, _frame):
    kill_all()
    sys.exit(128 + signum)


# ---------------------------------------------------------------------------- measurement

def wait_ready(proc, tele, port, key, timeout, baseline=0, ready_fn=None):
    """Waits until the tool's counter `key` on `port` exceeds `baseline` (or, for a tool
    without telemetry, until `ready_fn()` says so); False on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not proc.alive():
            raise BenchError("%s exited during start-up:\n%s" % (proc.cmd[0], proc.tail()))
        if tele.try_connect():
            try:
                st = tele.port_stats(port)
                if st and st.get(key, 0) > baseline:
                    return True
            except (OSError, ValueError):
                tele.close()
        elif ready_fn is not None and ready_fn():
            return True
        time.sleep(0.1)
    return False


def sample(tele, port, key):
    t0 = time.monotonic()
    v = tele.port_stats(port)[key]
    t1 = time.monotonic()
    return v, (t0 + t1) / 2


def measure_rate(proc, tele, port, key, opts, timeout=None, baseline=0, ready_fn=None):
    """Mpps of counter `key` on `port` over `measure` seconds after `warmup` seconds;
    None if the tool has no telemetry socket (then only the interval is waited out)."""
    timeout = timeout or opts.startup_timeout
    if not wait_ready(proc, tele, port, key, timeout, baseline, ready_fn):
        raise BenchError("%s: no traffic on port %d within %ds (log %s):\n%s"
                         % (proc.cmd[0], port, timeout, proc.logfile, proc.tail()))
    if tele.sock is None:
        time.sleep(opts.warmup + opts.measure)
        return None
    time.sleep(opts.warmup)
    a, ta = sample(tele, port, key)
    time.sleep(opts.measure)
    b, tb = sample(tele, port, key)
    if not proc.alive():
        raise BenchError("%s exited while measured:\n%s" % (proc.cmd[0], proc.tail()))
    return (b - a) / (tb - ta) / 1e6


# ---------------------------------------------------------------------------- tools

def lcores_override(spec, workers):
    """`--lcores 0@0,1@0,2@1`: the EAL placement of lcore 0 (main) and the N workers,
    each `L@C` with L = 0..N in order. Returns (lcores, l3fwd's worker-only lcores)."""
    parts = spec.split(",")
    if len(parts) != workers + 1:
        raise ValueError("--lcores %s names %d lcores; --workers %d needs %d (main + workers)"
                         % (spec, len(parts), workers, workers + 1))
    for i, part in enumerate(parts):
        lc, _, cpu = part.partition("@")
        if lc != str(i) or not cpu.isdigit():
            raise ValueError("--lcores %s: entry %d is %r, want %d@CPU" % (spec, i, part, i))
    return spec, ",".join(parts[1:])


class Bench:
    def __init__(self, opts):
        self.o = opts
        self.seq = 0
        self.kept = None  # (Proc, Telemetry) of the l3fwd kept between runs
        self.workers = opts.workers
        self.lcores = "0-%d" % self.workers if self.workers > 1 else "0,1"
        # l3fwd's lcores: the workers' only (see l3fwd()).
        self.l3fwd_lcores = "1" if self.workers == 1 else "1-%d" % self.workers
        cpus = os.cpu_count() or 1
        if opts.share_cpus and self.workers + 1 > cpus:
            # More lcores than CPUs: lcore 0 on CPU 0, workers round robin on the others.
            spare = max(cpus - 1, 1)
            place = lambda k: "%d@%d" % (k, min(1 + (k - 1) % spare, cpus - 1))
            workers = [place(k) for k in range(1, self.workers + 1)]
            self.lcores = ",".join(["0@0"] + workers)
            self.l3fwd_lcores = ",".join(workers)
        if opts.lcores:
            self.lcores, self.l3fwd_lcores = lcores_override(opts.lcores, self.workers)
        self.pool = max(16383, (1 << (opts.count * self.workers + 16384).bit_length()) - 1)

    def prefix(self):
        self.seq += 1
        return "mplsbench%d_%d" % (os.getpid(), self.seq)

    def eal_mem(self):
        return [] if self.o.huge else ["--no-huge", "-m", str(self.o.memory_mb)]

    def pcap_vdev(self, pcap):
        # One rx_pcap per queue: each queue replays the whole pcap from its own ring.
        return "net_pcap0," + ",".join(["rx_pcap=%s" % pcap] * self.workers) + ",infinite_rx=1"

    def null_vdev(self):
        return "net_null0,no-rx=1"

    def eal(self, fp, pcap, lcores=None):
        lcores = lcores or self.lcores
        flag = "--lcores" if "@" in lcores else "-l"  # L@C places lcore L on CPU C
        return ([flag, lcores] + self.eal_mem()
                + ["--no-pci", "--file-prefix", fp, "--vdev", self.pcap_vdev(pcap),
                   "--vdev", self.null_vdev()])

    def logname(self, scen, tool, run):
        return os.path.join(self.o.workdir, "logs", "%s-%s-r%d.log" % (scen, tool, run))

    def testpmd(self, scen, run, pcap, mode):
        fp = self.prefix()
        n = self.workers
        cmd = ([self.o.testpmd] + self.eal(fp, pcap)
               + ["--", "--forward-mode=%s" % mode, "--nb-cores=%d" % n,
                  "--rxq=%d" % n, "--txq=%d" % n, "--rxd=1024", "--txd=1024", "--burst=%d" % self.o.burst,
                  "--total-num-mbufs=%d" % self.pool, "--record-core-cycles"])
        tool = "source" if mode == "rxonly" else "testpmd"
        proc = Proc(cmd, self.logname(scen, tool, run), fp)
        tele = Telemetry(fp)
        try:
            port, key = (SOURCE_PORT, "ipackets") if mode == "rxonly" else (SINK_PORT, "opackets")
            rate = measure_rate(proc, tele, port, key, self.o)
        finally:
            tele.close()
            proc.stop()
        m = re.findall(r"CPU cycles/packet=([0-9.]+)", proc.output())
        cpp = float(m[-1]) if m else None
        return rate, cpp

    def l3fwd_cmd(self, fp, pcap, rules4, rules6):
        """l3fwd's command line (LPM, the scenario's rules, this source and sink)."""
        cfg = ["(0,%d,%d)" % (q, q + 1) for q in range(self.workers)] + ["(1,0,1)"]
        # l3fwd wants one TX queue per EAL lcore on every port, and net_pcap has one per
        # rx_pcap; so l3fwd gets the worker lcores only (its main lcore forwards too).
        return ([self.o.l3fwd] + self.eal(fp, pcap, self.l3fwd_lcores)
                + ["--", "-p", "0x3", "-P", "--lookup=lpm", "--parse-ptype",
                   "--config", ",".join(cfg), "--rule_ipv4", rules4, "--rule_ipv6", rules6,
                   "--eth-dest=0,02:00:00:00:00:02", "--eth-dest=1,02:00:00:00:01:02",
                   "--rx-queue-size", "1024", "--tx-queue-size", "1024"])

    def l3fwd(self, scen, run, pcap, rules4, rules6):
        """Starts l3fwd, measures it, and keeps it frozen (SIGSTOP) for the next runs:
        rte_lpm_add scans all rules of the same depth, so loading a full view is
        quadratic (minutes). l3fwd keeps no cycle counters a freeze could distort."""
        if self.kept:
            return self.l3fwd_again()
        fp = self.prefix()
        cmd = self.l3fwd_cmd(fp, pcap, rules4, rules6)
        proc = Proc(cmd, self.logname(scen, "l3fwd", run), fp)
        tele = Telemetry(fp)
        try:
            rate = measure_rate(proc, tele, SINK_PORT, "opackets", self.o,
                                timeout=self.o.l3fwd_startup_timeout)
        except BaseException:
            tele.close()
            proc.stop()
            raise
        proc.freeze()
        self.kept = (proc, tele)
        return rate

    def l3fwd_again(self):
        """Thaws the kept l3fwd and measures it again (no reload of its table)."""
        proc, tele = self.kept
        proc.thaw()
        try:
            base = tele.port_stats(SINK_PORT)["opackets"]
            rate = measure_rate(proc, tele, SINK_PORT, "opackets", self.o, baseline=base)
        except BaseException:
            self.drop_kept()
            raise
        proc.freeze()
        return rate

    def drop_kept(self):
        if self.kept:
            proc, tele = self.kept
            tele.close()
            proc.stop()
            self.kept = None

    def router_config(self, scen, fp, pcap, routes):
        q = lambda s: json.dumps(s)  # JSON strings are YAML double-quoted scalars
        punt = scen in punt_mix.SCENARIOS
        # The punt mixes: `in` on a /16 (ARP from random on-link senders), the good half
        # out of `out` (the measured sink), gleans on `lan`'s connected 10.1.0.0/16.
        in_net, out_net = ("10.0.0.1/16", "10.2.0.1/24") if punt else ("10.0.0.1/24", "10.0.1.1/24")
        if scen in IPV6_SCENARIOS:  # the IPv6 side of traffic::Topology6
            in_net, out_net = in_net + ', "2001:db8::1/64"', out_net + ', "2001:db8:1::1/64"'
        extra_ports = ["  - {name: lan, vdev: \"net_null1,no-rx=1\", addresses: [10.1.0.1/16]}"] if punt else []
        lines = [
            "# Generated by scripts/bench.sh for one measurement; not a config to edit.",
            "eal: {lcores: %s, no_huge: %s, file_prefix: %s%s}"
            % (q(self.lcores), "false" if self.o.huge else "true", q(fp),
               "" if self.o.huge else ", memory_mb: %d" % self.o.memory_mb),
            "ports:",
            # The MAC gen-traffic's frames are sent to: the router routes only frames
            # addressed to its port (net_pcap's own MAC differs).
            "  - {name: in, vdev: %s, mac: \"02:00:00:00:00:01\", addresses: [%s],"
            " rx_queues: %d}" % (q(self.pcap_vdev(pcap)), in_net, self.workers),
            "  - {name: out, vdev: %s, addresses: [%s]}" % (q(self.null_vdev()), out_net),
        ] + extra_ports + [
            "mempool: {size: %d}" % self.pool,
            "burst_size: %d" % self.o.burst,
            # Any free port: a router already running on the host keeps its 9550.
            'metrics_listen: "127.0.0.1:0"',
            "routes: %s" % q(os.path.abspath(routes)),
        ]
        if self.workers > 1:
            lines.append("workers:")
            for w in range(self.workers):
                rx = "{port: in, queue: %d}" % w + (", {port: out, queue: 0}" if w == 0 else "")
                rx += ", {port: lan, queue: 0}" if punt and w == 0 else ""
                lines.append("  - {lcore: %d, rx: [%s]}" % (w + 1, rx))
        path = os.path.join(self.o.workdir, "%s-router.yaml" % scen)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def router(self, scen, run, pcap, routes, binary=None, tool="router"):
        fp = self.prefix()
        cfg = self.router_config(scen, fp, pcap, routes)
        hard = self.o.startup_timeout + self.o.warmup + self.o.measure + 30
        cmd = [binary or self.o.router, "run", "--config", cfg, "--duration", str(int(hard)),
               "--stats-interval", "1"]
        proc = Proc(cmd, self.logname(scen, tool, run), fp)
        tele = Telemetry(fp)
        def lines_moving():
            return any(float(m.group(2)) > 0 for m in map(LINE.match, proc.output().splitlines()) if m)

        try:
            tele_rate = measure_rate(proc, tele, SINK_PORT, "opackets", self.o,
                                     ready_fn=lines_moving)
            time.sleep(1.5)  # let the router's own line for the interval's end appear
        finally:
            tele.close()
            proc.stop()
        out = proc.output()
        own = own_rate(out, self.o.warmup, self.o.measure)
        cpp, fwd, p10 = summary_cycles(out)
        if own is None and tele_rate is None:
            raise BenchError("router: neither counters lines nor telemetry (log %s)" % proc.logfile)
        if own is None:
            log("%s: no router counters lines in the window; using telemetry" % scen)
        elif tele_rate and abs(own - tele_rate) / tele_rate > 0.05:
            log("%s: router's own rate %.3f and telemetry %.3f Mpps differ by over 5%%"
                % (scen, own, tele_rate))
        return (own if own is not None else tele_rate), tele_rate, cpp, fwd, p10


LINE = re.compile(r"^\[\s*([0-9.]+)s\].*\bout rx [0-9.]+ tx ([0-9.]+) Mpps")


def summary_cycles(text):
    """(busy, forwarding, forwarding p10) cycles a packet from the router's summary; each
    None when absent (builds before the stage histogram print no p10)."""
    def last(pattern):
        m = re.findall(pattern, text)
        return float(m[-1]) if m else None
    return (last(r"busy cycles/pkt ([0-9.]+)"), last(r"forwarding cycles/pkt ([0-9.]+)"),
            last(r"\(full bursts [0-9]+ p10 ([0-9.]+) p50"))


def own_rate(text, warmup, measure):
    """Sink TX Mpps from the router's counters lines whose interval lies after warm-up and
    within the measured span (each line covers the time since the previous one)."""
    prev, num, den = 0.0, 0.0, 0.0
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        t, rate = float(m.group(1)), float(m.group(2))
        if prev >= warmup - 0.05 and t <= warmup + measure + 0.6:
            num += rate * (t - prev)
            den += t - prev
        prev = t
    return num / den if den > 0 else None


# ---------------------------------------------------------------------------- driver

def generate(o, scen):
    pcap = os.path.abspath(os.path.join(o.workdir, "%s.pcap" % scen))
    routes = os.path.abspath(os.path.join(o.workdir, "%s-routes.yaml" % scen))
    if scen in punt_mix.SCENARIOS:
        punt_mix.generate(scen, o.count, pcap, routes)
        return pcap, routes
    cmd = [o.router, "gen-traffic", scen, "--out", pcap, "--routes", routes,
           "--count", str(o.count), "--size", str(o.size)]
    if scen in FULL_VIEWS:
        flag = FULL_VIEWS[scen]
        cmd += ["--" + flag, getattr(o, flag)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise BenchError("gen-traffic %s failed:\n%s%s" % (scen, r.stdout, r.stderr))
    return pcap, routes


def l3fwd_rules(o, scen, routes):
    """l3fwd's two rule files for a plain IP scenario: the scenario's routes, and for the
    family it has none of, a placeholder (l3fwd falls back to its demo routes without)."""
    paths = {4: os.path.join(o.workdir, "%s.rules4" % scen),
             6: os.path.join(o.workdir, "%s.rules6" % scen)}
    counts = routes2l3fwd.convert(routes, paths[4], paths[6])
    for fam, n in counts.items():
        if n == 0:
            with open(paths[fam], "w") as f:
                f.write(PLACEHOLDER_RULE[fam])
    log("%s: %d IPv4 and %d IPv6 rules for l3fwd" % (scen, counts[4], counts[6]))
    return paths[4], paths[6]


ROUTER_FIGURES = ("router_mpps", "router_cycles_per_packet", "router_forwarding_cycles_per_packet",
                  "router_forwarding_p10_cycles_per_packet")


def router_order(labels, run):
    """The routers' order in run `run` (from 1): rotated by one each run, so that with as
    many runs as routers each takes each place once (a drift of the host hits all alike)."""
    k = (run - 1) % len(labels)
    return labels[k:] + labels[:k]


def measure_router(b, scen, run, pcap, routes, binary, label, samples):
    tool = "router" if label is None else "router@" + label
    rate, tele_rate, cpp, fwd, p10 = b.router(scen, run, pcap, routes, binary, tool)
    for key, v in zip(ROUTER_FIGURES, (rate, cpp, fwd, p10)):
        samples[key].append(v)
    samples["router_telemetry_mpps"].append(tele_rate)  # None: no socket
    return rate


def run_scenario(b, o, scen):
    """The scenario's results: the router's, then one per --compare binary (named
    SCENARIO@LABEL), each with the source, testpmd and l3fwd figures of the same runs."""
    pcap, routes = generate(o, scen)
    plain = scen in PLAIN_IP and o.l3fwd is not None
    rules4 = rules6 = None
    if plain:
        rules4, rules6 = l3fwd_rules(o, scen, routes)
    binaries = {None: o.router}
    binaries.update(dict(o.compare))
    labels = list(binaries)
    samples = {}
    for label in labels:
        samples[label] = {k: [] for k, _ in report.FIGURES}
        samples[label]["router_telemetry_mpps"] = []
    shared = samples[None]

    def source():
        rate, _ = b.testpmd(scen, run, pcap, "rxonly")
        shared["source_rx_mpps"].append(rate)
        return rate

    def testpmd():
        rate, cpp = b.testpmd(scen, run, pcap, "io")
        shared["testpmd_io_mpps"].append(rate)
        shared["testpmd_io_cycles_per_packet"].append(cpp)
        return rate

    def l3fwd():
        rate = b.l3fwd(scen, run, pcap, rules4, rules6)
        shared["l3fwd_mpps"].append(rate)
        return rate

    def router(label):
        return lambda: measure_router(b, scen, run, pcap, routes, binaries[label], label,
                                      samples[label])

    for run in range(1, o.runs + 1):
        # A B C D A B C D ...: slow drifts of the host hit every tool alike.
        steps = [("source", source), ("testpmd", testpmd)]
        steps += [("l3fwd", l3fwd)] if plain else []
        steps += [("router" if l is None else "router@" + l, router(l))
                  for l in router_order(labels, run)]
        for name, step in steps:
            try:
                rate = step()
                log("%s run %d/%d %-7s %.3f Mpps" % (scen, run, o.runs, name, rate))
            except BenchError as e:
                log("%s run %d %s FAILED: %s" % (scen, run, name, e))
                if o.fail_fast:
                    raise
    b.drop_kept()
    applicable = {"l3fwd_mpps": plain}
    results = []
    for label in labels:
        s = dict(samples[label])
        for key in ("source_rx_mpps", "testpmd_io_mpps", "testpmd_io_cycles_per_packet",
                    "l3fwd_mpps"):
            s[key] = shared[key]
        p10 = "router_forwarding_p10_cycles_per_packet"
        # A build from before the stage histogram has no p10: not measured, not failed.
        has_p10 = any(v is not None for v in s[p10]) or not s["router_mpps"]
        res = report.scenario_result(scen if label is None else "%s@%s" % (scen, label),
                                     s, o.runs, dict(applicable, **{p10: has_p10}))
        res["router_label"] = label
        res["samples"]["router_telemetry_mpps"] = [
            None if v is None else round(v, 3) for v in s["router_telemetry_mpps"]]
        if scen in PLAIN_IP and o.l3fwd is None:
            res["l3fwd_skipped"] = "l3fwd not built (--no-l3fwd)"
        results.append(res)
    return results


def run_punt(b, o, scens):
    """The punt mixes, router only, alternated scenario by scenario within each run (so
    the no-route reference shares the sitting), each compared with punt-noroute."""
    if "punt-noroute" not in scens:
        scens = ["punt-noroute"] + scens
    gen = {s: generate(o, s) for s in scens}
    keys = ROUTER_FIGURES
    samples = {s: {k: [] for k, _ in report.FIGURES} for s in scens}
    for run in range(1, o.runs + 1):
        for scen in scens:
            try:
                rate, _, cpp, fwd, p10 = b.router(scen, run, *gen[scen])
            except BenchError as e:
                log("%s run %d router FAILED: %s" % (scen, run, e))
                if o.fail_fast:
                    raise
                continue
            for k, v in zip(keys, (rate, cpp, fwd, p10)):
                samples[scen][k].append(v)
            log("%s run %d/%d router %.3f Mpps good, %s busy cycles/pkt"
                % (scen, run, o.runs, rate, cpp))
    applicable = {k: k in keys for k, _ in report.FIGURES}
    results = [report.scenario_result(s, samples[s], o.runs, applicable) for s in scens]
    report.add_punt_ratios(results)
    return results


def max_l3fwd_count(workers):
    """The largest --count whose pcap l3fwd's pool holds on `workers` queues."""
    return (L3FWD_POOL - l3fwd_mbufs_needed(0, workers)) // workers


def l3fwd_pool_error(count, workers):
    """Why l3fwd cannot run a pcap of `count` frames on `workers` queues; None if it can."""
    need = l3fwd_mbufs_needed(count, workers)
    if need <= L3FWD_POOL:
        return None
    return ("--count %d: l3fwd's pool holds %d mbufs and this pcap on %d queue(s) needs about "
            "%d (one per stored frame, and its rings); give at most --count %d, or --no-l3fwd"
            % (count, L3FWD_POOL, workers, need, max_l3fwd_count(workers)))


def parse_compare(spec):
    """LABEL=BINARY of --compare: (label, absolute path); ValueError says what is wrong."""
    label, sep, path = spec.partition("=")
    if not sep or not re.fullmatch(r"[A-Za-z0-9_.-]+", label) or not path:
        raise ValueError("--compare %r: want LABEL=BINARY, LABEL of letters, digits, _ . -"
                         % spec)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise ValueError("--compare %s: %s is not an executable file" % (label, path))
    return label, os.path.abspath(path)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench.py", description=__doc__.splitlines()[0])
    p.add_argument("--router", required=True)
    p.add_argument("--testpmd", required=True)
    p.add_argument("--l3fwd", help="l3fwd binary; omitted: no l3fwd figures")
    p.add_argument("--repo", required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--scenario", action="append",
                   choices=ALL_SCENARIOS + ["demo", "punt", "ipv6"] + punt_mix.SCENARIOS)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--warmup", type=float, default=2.0)
    p.add_argument("--measure", type=float, default=5.0)
    p.add_argument("--count", type=int, default=4096)
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--burst", type=int, default=32,
                   help="packets per RX/TX burst for every tool (l3fwd: as it was built)")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--share-cpus", action="store_true")
    p.add_argument("--lcores", help="EAL placement L@C of lcore 0 and each worker")
    p.add_argument("--huge", action="store_true")
    p.add_argument("--memory-mb", type=int, default=2048)
    p.add_argument("--prefixes", required=True)
    p.add_argument("--prefixes6", default="")
    p.add_argument("--startup-timeout", type=int, default=180)
    p.add_argument("--l3fwd-startup-timeout", type=int, default=1800)
    p.add_argument("--json")
    p.add_argument("--fail-fast", action="store_true")
    p.add_argument("--compare", action="append", default=[], metavar="LABEL=BINARY",
                   help="another router binary measured in the same runs")
    o = p.parse_args(argv)
    try:
        o.compare = [parse_compare(c) for c in o.compare]
    except ValueError as e:
        p.error(str(e))
    if len(set(l for l, _ in o.compare)) < len(o.compare):
        p.error("--compare: each LABEL once")
    if o.runs < 1 or o.workers < 1 or o.measure <= 0 or o.warmup < 0:
        p.error("--runs and --workers must be >= 1, --measure > 0, --warmup >= 0")
    if o.lcores:
        try:
            lcores_override(o.lcores, o.workers)
        except ValueError as e:
            p.error(str(e))
    return o


def main(argv):
    o = parse_args(argv)
    atexit.register(kill_all)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    os.makedirs(os.path.join(o.workdir, "logs"), exist_ok=True)
    scenarios = o.scenario or list(ALL_SCENARIOS)
    if "punt" in scenarios:
        scenarios = [s for s in scenarios if s != "punt"] + punt_mix.SCENARIOS
    punts = [s for s in dict.fromkeys(scenarios) if s in punt_mix.SCENARIOS]
    scenarios = [s for s in scenarios if s not in punt_mix.SCENARIOS]
    if "ipv6" in scenarios:
        scenarios = [s for s in scenarios if s != "ipv6"] + IPV6_SCENARIOS
    scenarios = list(dict.fromkeys(scenarios))
    for full, flag in FULL_VIEWS.items():
        path = getattr(o, flag)
        if full in scenarios and not os.path.exists(path):
            if full in (o.scenario or []):
                raise SystemExit("bench: %s needs the prefix list %s (--%s FILE)" % (full, path, flag))
            log("skipping %s: no prefix list at %s (give --%s FILE)" % (full, path, flag))
            scenarios.remove(full)
    pool_error = l3fwd_pool_error(o.count, o.workers)
    if o.l3fwd and PLAIN_IP & set(scenarios) and pool_error:
        raise SystemExit("bench: " + pool_error)
    if punts and o.compare:
        raise SystemExit("bench: --compare measures the forwarding scenarios, not the punt mixes")
    b = Bench(o)
    host = report.host_info(o.repo, o.huge, o.router)  # before the runs: what was measured
    host["compare"] = {label: report.binary_version(path) for label, path in o.compare}
    started = time.time()
    results = []
    for scen in scenarios:
        t0 = time.monotonic()
        results += run_scenario(b, o, scen)
        log("%s done in %.0fs" % (scen, time.monotonic() - t0))
    punt_results = run_punt(b, o, punts) if punts else []
    results += punt_results
    settings = {
        "runs": o.runs, "warmup_s": o.warmup, "measure_s": o.measure,
        "pcap_frames": o.count, "frame_size": o.size, "burst": o.burst,
        "workers": o.workers,
        "share_cpus": o.share_cpus,
        "lcores": b.lcores, "hugepages": o.huge,
        "l3fwd": os.path.basename(o.l3fwd) if o.l3fwd else None,
        "started_at": time.strftime(
            "%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "wall_s": round(time.time() - started, 1),
        "method": {
            "router_mpps": "router's own counters line: sink (out) TX, intervals after warm-up",
            "testpmd_io_mpps": "telemetry /ethdev/stats sink opackets delta over the interval",
            "l3fwd_mpps": "telemetry /ethdev/stats sink opackets delta over the interval",
            "source_rx_mpps": "telemetry /ethdev/stats source ipackets delta, testpmd rxonly",
            "router_cycles_per_packet": "router summary: busy TSC cycles / packets received",
            "router_forwarding_cycles_per_packet": "router summary: TSC cycles of the forwarding stage (the net pipeline) / packets received",
            "router_forwarding_p10_cycles_per_packet": "router summary: 10th percentile of full bursts' forwarding stage TSC cycles / packets (quarter-cycle buckets, warm-up included)",
            "testpmd_io_cycles_per_packet": "testpmd --record-core-cycles CPU cycles/packet",
            "punt_good_vs_noroute": "punt-*: router_mpps (the good half, TX on out) / punt-noroute's",
            "punt_cycles_vs_noroute": "punt-*: router_cycles_per_packet / punt-noroute's",
        },
    }
    plain = [r for r in results if r["name"] not in punt_mix.SCENARIOS]
    if plain:
        print(report.table(plain))
    if punt_results:
        print(report.punt_table(punt_results))
    if o.json:
        report.write_json(o.json, host, settings, results)
        log("wrote %s" % o.json)
    failed = [r["name"] for r in results
              if any(r["applicable"][k] and r[k] is None for k, _ in report.FIGURES)]
    if failed:
        log("some figures failed in: %s (logs in %s/logs)" % (", ".join(failed), o.workdir))
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BenchError as e:
        log(str(e))
        sys.exit(1)
