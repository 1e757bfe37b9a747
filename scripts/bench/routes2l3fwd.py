#!/usr/bin/env python3
"""Turns a routes file written by `mplsrouter gen-traffic` into l3fwd's LPM rule file.

l3fwd (DPDK 22.11) reads `--rule_ipv4 FILE` with one rule a line, `R<ip>/<depth> <port>`.
The bench gives l3fwd exactly the prefixes the router gets, each to the port its next
hop lives on (the scenario topology: 10.0.0.0/24 is port 0 `in`, everything else port 1
`out`), so both do the same lookups on the same table.

Only the shapes gen-traffic writes are understood (`- {prefix: P, via: NH ...}` lines
and `prefix_groups` blocks); a route with a label push or several next hops makes the
scenario not plain IPv4 and is refused, so a comparison never silently differs.

    routes2l3fwd.py ROUTES.yaml OUT.rules
"""

import ipaddress
import re
import sys

IN_SUBNET = ipaddress.ip_network("10.0.0.0/24")

_INLINE = re.compile(r"^\s*-\s*\{\s*prefix:\s*([0-9./]+)\s*,\s*via:\s*([0-9.]+)\s*(.*)\}\s*$")
_GROUP_VIA = re.compile(r"^\s*-\s*via:\s*([0-9.]+)\s*$")
_GROUP_PREFIX = re.compile(r"^\s+([0-9]+\.[0-9]+\.[0-9]+\.[0-9]+/[0-9]+)\s*$")
_SECTION = re.compile(r"^([a-z0-9_]+):")


class RoutesError(Exception):
    pass


def port_of(via):
    return 0 if ipaddress.ip_address(via) in IN_SUBNET else 1


def rules(lines):
    """Yields (prefix text `a.b.c.d/len`, port) for every IPv4 route in the routes file `lines`."""
    section = None
    group_port = None
    for n, line in enumerate(lines, 1):
        m = _SECTION.match(line)
        if m:
            section = m.group(1)
            group_port = None
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if section == "ipv4":
            m = _INLINE.match(line)
            if m:
                if m.group(3).strip():
                    raise RoutesError("line %d: not a plain IPv4 route: %s" % (n, line.strip()))
                yield m.group(1), port_of(m.group(2))
            elif line.lstrip().startswith("-") or "nexthops" in line:
                raise RoutesError("line %d: route form not understood: %s" % (n, line.strip()))
        elif section == "prefix_groups":
            m = _GROUP_VIA.match(line)
            if m:
                group_port = port_of(m.group(1))
                continue
            m = _GROUP_PREFIX.match(line)
            if m:
                if group_port is None:
                    raise RoutesError("line %d: prefix before its group's via" % n)
                yield m.group(1), group_port
        elif section == "mpls":
            raise RoutesError("line %d: MPLS entries: not a plain IPv4 scenario" % n)


def convert(routes_path, out_path):
    count = 0
    with open(routes_path) as f, open(out_path, "w") as out:
        for prefix, port in rules(f):
            out.write("R%s %d\n" % (prefix, port))
            count += 1
    if count == 0:
        raise RoutesError("%s: no IPv4 routes" % routes_path)
    return count


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    try:
        n = convert(argv[1], argv[2])
    except (OSError, RoutesError, ValueError) as e:
        print("routes2l3fwd: %s" % e, file=sys.stderr)
        return 1
    print("routes2l3fwd: %d rules -> %s" % (n, argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
