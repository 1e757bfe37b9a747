"""Aggregates bench samples into medians and ranges, prints the table, writes the JSON.

Pure functions over plain data (no processes here), so the table and JSON shape can be
checked on their own. A figure that was not measured (l3fwd on an MPLS scenario) is
None in JSON and `n/a` in the table; a figure that should have been measured but failed
is None too and shows as `FAILED`, so a broken run is never mistaken for a slow one.
"""

import json
import os
import platform
import statistics
import subprocess

# (JSON key, table header) in table order; *_mpps and cycles figures.
FIGURES = [
    ("router_mpps", "router Mpps"),
    ("testpmd_io_mpps", "testpmd io Mpps"),
    ("l3fwd_mpps", "l3fwd Mpps"),
    ("source_rx_mpps", "source rx Mpps"),
    ("router_cycles_per_packet", "router cyc/pkt"),
    ("router_forwarding_cycles_per_packet", "router fwd cyc/pkt"),
    # The 10th percentile of full bursts' stage cycles a packet (the router's summary):
    # the stage when the host's neighbours left it alone, steadier than the average.
    ("router_forwarding_p10_cycles_per_packet", "fwd p10 cyc/pkt"),
    ("testpmd_io_cycles_per_packet", "io cyc/pkt"),
]


def summarize(samples):
    """median, min, max of the non-None samples; (None, None, None) if there are none."""
    vals = [v for v in samples if v is not None]
    if not vals:
        return None, None, None
    return statistics.median(vals), min(vals), max(vals)


def scenario_result(name, samples, runs, applicable):
    """One scenario's JSON object. `samples`: figure -> list of per-run values;
    `applicable`: figure -> whether this scenario measures it."""
    out = {"name": name, "runs": runs}
    for key, _ in FIGURES:
        med, lo, hi = summarize(samples.get(key, [])) if applicable.get(key, True) else (None,) * 3
        out[key] = _round(med)
        out[key + "_min"] = _round(lo)
        out[key + "_max"] = _round(hi)
    out["applicable"] = {k: bool(applicable.get(k, True)) for k, _ in FIGURES}
    out["samples"] = {k: [_round(v) for v in samples.get(k, [])] for k, _ in FIGURES}
    r, io, l3 = out["router_mpps"], out["testpmd_io_mpps"], out["l3fwd_mpps"]
    out["router_vs_testpmd_io"] = _round(r / io) if r and io else None
    out["router_vs_l3fwd"] = _round(r / l3) if r and l3 else None
    return out


def _round(v):
    return None if v is None else round(float(v), 3)


def _cell(res, key):
    if not res["applicable"][key]:
        return "n/a"
    med = res[key]
    if med is None:
        return "FAILED"
    digits = 1 if "cycles" in key else 2
    if res["runs"] > 1 and res[key + "_min"] != res[key + "_max"]:
        return "%.*f (%.*f-%.*f)" % (digits, med, digits, res[key + "_min"], digits, res[key + "_max"])
    return "%.*f" % (digits, med)


def table(results):
    """The stdout table (also valid Markdown)."""
    headers = ["scenario"] + [h for _, h in FIGURES] + ["router/io", "router/l3fwd"]
    rows = []
    for res in results:
        row = [res["name"]] + [_cell(res, k) for k, _ in FIGURES]
        for k in ("router_vs_testpmd_io", "router_vs_l3fwd"):
            row.append("%.2f" % res[k] if res[k] is not None else "-")
        rows.append(row)
    widths = [max(len(r[i]) for r in [headers] + rows) for i in range(len(headers))]
    fmt = "| " + " | ".join("%%-%ds" % w for w in widths) + " |"
    lines = [fmt % tuple(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += [fmt % tuple(r) for r in rows]
    return "\n".join(lines)


def add_punt_ratios(results):
    """Adds each punt mix's good rate and busy cycles/packet relative to punt-noroute's
    (the issue's targets: >= 0.95 and <= 1.10)."""
    ref = next((r for r in results if r["name"] == "punt-noroute"), None)
    for r in results:
        for key, fig in (("punt_good_vs_noroute", "router_mpps"),
                         ("punt_cycles_vs_noroute", "router_cycles_per_packet")):
            a, b = r[fig], ref[fig] if ref else None
            r[key] = _round(a / b) if a and b else None


def punt_table(results):
    """The punt mixes' table (Markdown)."""
    headers = ["mix", "good Mpps", "busy cyc/pkt", "fwd cyc/pkt", "good vs noroute",
               "cyc vs noroute"]
    rows = []
    for r in results:
        ratio = lambda k: "%.2f" % r[k] if r[k] is not None else "-"
        rows.append([r["name"], _cell(r, "router_mpps"), _cell(r, "router_cycles_per_packet"),
                     _cell(r, "router_forwarding_cycles_per_packet"),
                     ratio("punt_good_vs_noroute"), ratio("punt_cycles_vs_noroute")])
    widths = [max(len(x[i]) for x in [headers] + rows) for i in range(len(headers))]
    fmt = "| " + " | ".join("%%-%ds" % w for w in widths) + " |"
    lines = [fmt % tuple(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    return "\n".join(lines + [fmt % tuple(x) for x in rows])


def _cmd(args):
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def host_info(repo, huge, router_bin):
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    rev = _cmd(["git", "-C", repo, "rev-parse", "--short=12", "HEAD"])
    if rev and _cmd(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"]):
        rev += "-dirty"
    return {
        "cpu_model": cpu,
        "cpus_online": os.cpu_count(),
        "kernel": platform.release(),
        "dpdk_version": _cmd(["pkg-config", "--modversion", "libdpdk"]),
        "hugepages": bool(huge),
        "git_rev": rev,
        # The binary's own account (its git revision can differ from the tree's).
        "router_version": binary_version(router_bin),
    }


def binary_version(path):
    """A router binary's `--version` on one line (empty if it has none)."""
    return "; ".join(_cmd([path, "--version"]).splitlines())


def write_json(path, host, settings, results):
    doc = {"host": host, "settings": settings, "scenarios": results}
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
