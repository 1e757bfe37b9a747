#!/usr/bin/env python3
"""Turns a routes file written by `mplsrouter gen-traffic` into l3fwd's LPM rule files.

l3fwd (DPDK 22.11) reads `--rule_ipv4 FILE` and `--rule_ipv6 FILE` with one rule a line,
`R<ip>/<depth> <port>`. The bench gives l3fwd exactly the prefixes the router gets, each
to the port its next hop lives on (the scenario topology: 10.0.0.0/24 and 2001:db8::/64
are port 0 `in`, everything else port 1 `out`), so both do the same lookups on the same
table.

Only the shapes gen-traffic writes are understood (`- {prefix: P, via: NH ...}` lines in
`ipv4` and `ipv6`, and `prefix_groups` blocks, addresses quoted or not); a route with a
label push or several next hops makes the scenario not plain IP and is refused, so a
comparison never silently differs.

    routes2l3fwd.py ROUTES.yaml OUT.rules4 [OUT.rules6]
"""

import ipaddress
import re
import sys

IN_SUBNETS = [ipaddress.ip_network("10.0.0.0/24"), ipaddress.ip_network("2001:db8::/64")]

_ADDR = r'"?([0-9a-fA-F.:]+)"?'
_PREFIX = r'"?([0-9a-fA-F.:]+/[0-9]+)"?'
_INLINE = re.compile(r"^\s*-\s*\{\s*prefix:\s*%s\s*,\s*via:\s*%s\s*(.*)\}\s*$" % (_PREFIX, _ADDR))
_GROUP_VIA = re.compile(r"^\s*-\s*via:\s*%s\s*$" % _ADDR)
_GROUP_PREFIX = re.compile(r"^\s+([0-9a-fA-F.:]+/[0-9]+)\s*$")
_SECTION = re.compile(r"^([a-z0-9_]+):")


class RoutesError(Exception):
    pass


def port_of(via):
    a = ipaddress.ip_address(via)
    return 0 if any(a in n for n in IN_SUBNETS if n.version == a.version) else 1


def family(prefix):
    return ipaddress.ip_network(prefix).version


def rules(lines):
    """Yields (prefix text `a.b.c.d/len` or `x:y::/len`, port) for every IPv4 and IPv6
    route in the routes file `lines`."""
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
        if section in ("ipv4", "ipv6"):
            m = _INLINE.match(line)
            if m:
                if m.group(3).strip():
                    raise RoutesError("line %d: not a plain IP route: %s" % (n, line.strip()))
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
            raise RoutesError("line %d: MPLS entries: not a plain IP scenario" % n)


def convert(routes_path, out_path, out6_path=None):
    """Writes the IPv4 rules to `out_path` and the IPv6 ones to `out6_path`; returns
    {4: count, 6: count}. Without `out6_path`, an IPv6 route is an error."""
    counts = {4: 0, 6: 0}
    with open(routes_path) as f, open(out_path, "w") as out4:
        out6 = open(out6_path, "w") if out6_path else None
        try:
            for prefix, port in rules(f):
                fam = family(prefix)
                if fam == 6 and out6 is None:
                    raise RoutesError("%s: IPv6 route %s and no IPv6 rule file" % (routes_path, prefix))
                (out4 if fam == 4 else out6).write("R%s %d\n" % (prefix, port))
                counts[fam] += 1
        finally:
            if out6:
                out6.close()
    if counts[4] + counts[6] == 0:
        raise RoutesError("%s: no IP routes" % routes_path)
    return counts


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    try:
        n = convert(argv[1], argv[2], argv[3] if len(argv) == 4 else None)
    except (OSError, RoutesError, ValueError) as e:
        print("routes2l3fwd: %s" % e, file=sys.stderr)
        return 1
    print("routes2l3fwd: %d IPv4 rules -> %s, %d IPv6 rules -> %s"
          % (n[4], argv[2], n[6], argv[3] if len(argv) == 4 else "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
