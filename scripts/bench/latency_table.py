#!/usr/bin/env python3
"""Builds the markdown table of scripts/bench/latency.sh from its per-row JSON files
(udp_rr client --json) and logs: the seed's layout (labels x next hops, router beside
Linux at the same number of hops), then the flood and backoff rows. Stdlib only.

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


def main_table(out):
    rows = ["| labels | next hops | router hops | router trans/s | router RTT p50 / p99 / p99.9 µs"
            " | Linux hops | Linux trans/s (unlabelled) | Linux RTT p50 / p99 / p99.9 µs | IPv6 |",
            "|---|---|---|---|---|---|---|---|---|"]
    for nh in (1, 2):
        for labels in (0, 1, 2):
            hops = 1 if labels == 0 else 2
            r = load(out, "router-l%d-n%d" % (labels, nh))
            lx = load(out, "linux-h%d-n%d" % (hops, nh))
            if r is None:
                continue
            rows.append("| %d | %d | %d | %s | %s | %d | %s | %s | pending #20 |"
                        % tuple([labels, nh, hops] + cells(r) + [hops] + cells(lx)))
    return rows


def extra_rows(out, flood_rate):
    rows = []
    for name, what in (("router-l1-n1-flood", "router, 1 label, 1 next hop, under flood"),
                       ("linux-h2-n1-flood", "Linux, 2 hops, 1 next hop, under flood"),
                       ("router-l1-n1-backoff", "router, 1 label, 1 next hop, idle backoff")):
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
    print("udp_rr, 64-byte requests and responses, one outstanding, %.0f s per row. %s"
          % (secs, host))
    print()
    print("\n".join(main_table(out)))
    extra = extra_rows(out, flood_rate)
    if extra:
        print()
        print("\n".join(extra))


if __name__ == "__main__":
    main()
