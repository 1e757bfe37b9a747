#!/usr/bin/env python3
"""Builds the markdown tables of scripts/bench/latency.sh from its per-row JSON files
(udp_rr client --json) and logs: every row (family x next hops x labels, router beside
Linux at the same number of hops), the seed's layout (labels x next hops, trans/s per
family), then the flood, backoff and split-CPU rows. Stdlib only.

Row files: router-lL-nN / linux-hH-nN (IPv4), router6-lL-nN / linux6-hH-nN (IPv6).

    latency_table.py OUT_DIR FLOOD_RATE
"""

import json
import os
import re
import sys


def load(out, name):
    try:
        with open(os.path.join(out, name + ".json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def cells(r):
    """trans/s and 'p50 / p99 / p99.9' in microseconds, or dashes when not measured."""
    if r is None:
        return ["–", "–"]
    u = r["rtt_us"]
    lost = " (lost %d)" % r["lost"] if r["lost"] else ""
    return ["%.0f%s" % (r["trans_per_s"], lost), "%.0f / %.0f / %.0f" % (u["p50"], u["p99"], u["p999"])]


def log_line(out, name, pattern):
    try:
        with open(os.path.join(out, name)) as f:
            m = re.search(pattern, f.read())
        return m.group(1) if m else "?"
    except OSError:
        return "?"


FAMILIES = (("", "IPv4"), ("6", "IPv6"))


def family_name(tag, name, labels):
    """IPv6 over labels is 6PE (IPv6 pushed towards an IPv4 next hop, popped to IPv6)."""
    return name + " (6PE)" if tag == "6" and labels else name


def rows_of(out, tag, nh, labels):
    """(router hops, router row, Linux row at the same hops) of one cell of the layout."""
    hops = 1 if labels == 0 else 2
    return (hops, load(out, "router%s-l%d-n%d" % (tag, labels, nh)),
            load(out, "linux%s-h%d-n%d" % (tag, hops, nh)))


def main_table(out):
    rows = ["| family | labels | next hops | router hops | router trans/s"
            " | router RTT p50 / p99 / p99.9 µs | Linux hops | Linux trans/s (unlabelled)"
            " | Linux RTT p50 / p99 / p99.9 µs |",
            "|---|---|---|---|---|---|---|---|---|"]
    for tag, name in FAMILIES:
        for nh in (1, 2):
            for labels in (0, 1, 2):
                hops, r, lx = rows_of(out, tag, nh, labels)
                if r is None:
                    continue
                rows.append("| %s | %d | %d | %d | %s | %s | %d | %s | %s |"
                            % tuple([family_name(tag, name, labels), labels, nh, hops]
                                    + cells(r) + [hops] + cells(lx)))
    return rows


def rate(r):
    return "–" if r is None else "%.0f" % r["trans_per_s"]


def seed_table(out):
    """The seed's shape: labels x next hops, transactions/s per family (router, and Linux
    unlabelled at the same hops). Only cells the router measured in some family."""
    rows = ["| labels | next hops | router IPv4 trans/s | router IPv6 trans/s"
            " | Linux IPv4 trans/s | Linux IPv6 trans/s |",
            "|---|---|---|---|---|---|"]
    for nh in (1, 2):
        for labels in (0, 1, 2):
            (_, r4, l4), (_, r6, l6) = (rows_of(out, t, nh, labels) for t, _ in FAMILIES)
            if r4 is None and r6 is None:
                continue
            rows.append("| %d | %d | %s | %s | %s | %s |"
                        % (labels, nh, rate(r4), rate(r6), rate(l4), rate(l6)))
    return rows


def extra_rows(out, flood_rate):
    rows = []
    for name, what in (("router-l1-n1-flood", "router, 1 label, 1 next hop, under flood"),
                       ("linux-h2-n1-flood", "Linux, 2 hops, 1 next hop, under flood"),
                       ("router-l1-n1-backoff", "router, 1 label, 1 next hop, idle backoff"),
                       ("linux-h1-n1-split", "Linux, 1 hop, 1 next hop, server on CPU 1")):
        r = load(out, name)
        if r is None:
            continue
        note = ""
        if name.endswith("flood"):
            sent = log_line(out, name + "-flood.log", r"(\d+) sent")
            got = log_line(out, name + "-sink.log", r"(\d+) datagrams")
            note = "flood %s pps: %s sent, %s received" % (flood_rate, sent, got)
        rows.append("| %s | %s | %s | %s |" % tuple([what] + cells(r) + [note]))
    if rows:
        rows = ["| row | trans/s | RTT p50 / p99 / p99.9 µs | background |",
                "|---|---|---|---|"] + rows
    return rows


def main():
    out, flood_rate = sys.argv[1], sys.argv[2]
    with open(os.path.join(out, "host.log")) as f:
        host = "; ".join(l.replace("latency: ", "") for l in f.read().split("\n") if l)
    any_row = next((load(out, n[:-5]) for n in sorted(os.listdir(out)) if n.endswith(".json")), None)
    secs = any_row["seconds"] if any_row else 0
    print("udp_rr, 64-byte requests and responses, one outstanding, %g s per row. %s"
          % (secs, host))
    print()
    print("\n".join(main_table(out)))
    print()
    print("The seed's layout (IPv6 with labels is 6PE; Linux unlabelled, same hops):")
    print()
    print("\n".join(seed_table(out)))
    extra = extra_rows(out, flood_rate)
    if extra:
        print()
        print("\n".join(extra))


if __name__ == "__main__":
    main()
