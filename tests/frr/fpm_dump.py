#!/usr/bin/env python3
"""Prints FPM captures (fpm_recorder.py output) one netlink message a line, decoded by hand
from the kernel's uapi layouts, so fixtures can be described and checked by eye.

usage: fpm_dump.py FILE...
"""
import os
import socket
import struct
import sys

MSG = {16: "NEWLINK", 17: "DELLINK", 20: "NEWADDR", 21: "DELADDR", 24: "NEWROUTE",
       25: "DELROUTE", 28: "NEWNEIGH", 29: "DELNEIGH", 104: "NEWNEXTHOP", 105: "DELNEXTHOP"}
FAM = {2: "inet", 10: "inet6", 28: "mpls", 7: "bridge", 0: "unspec"}
RTYPE = {1: "unicast", 2: "local", 3: "broadcast", 6: "blackhole", 7: "unreachable",
         8: "prohibit", 9: "throw"}
RTA = {1: "dst", 2: "src", 3: "iif", 4: "oif", 5: "gateway", 6: "priority", 7: "prefsrc",
       8: "metrics", 9: "multipath", 15: "table", 18: "via", 19: "newdst", 21: "encap_type",
       22: "encap", 30: "nh_id"}
NHA = {1: "id", 2: "group", 3: "group_type", 4: "blackhole", 5: "oif", 6: "gateway",
       7: "encap_type", 8: "encap", 9: "groups", 10: "master", 11: "fdb"}


def attrs(b):
    """Yields (type, payload) of netlink attributes (rtattr/nlattr: u16 len, u16 type)."""
    off = 0
    while off + 4 <= len(b):
        alen, atype = struct.unpack_from("=HH", b, off)
        if alen < 4:
            yield (-1, b[off:])
            return
        yield (atype & 0x3FFF, b[off + 4: off + alen])
        off += (alen + 3) & ~3


def labels(b):
    out = []
    for i in range(0, len(b) - 3, 4):
        (v,) = struct.unpack_from(">I", b, i)
        s = f"{v >> 12}"
        if (v >> 8) & 1:
            s += "/S"
        if v & 0xFF:
            s += f"/ttl{v & 0xFF}"
        out.append(s)
    return "[" + " ".join(out) + "]"


def ip(fam, b):
    if fam == 2 and len(b) == 4:
        return socket.inet_ntop(socket.AF_INET, b)
    if fam == 10 and len(b) == 16:
        return socket.inet_ntop(socket.AF_INET6, b)
    if fam == 28:
        return labels(b)
    return b.hex()


def encap(b):
    return " ".join(f"{'mpls_dst' if t == 1 else t}={labels(p) if t == 1 else p.hex()}"
                    for t, p in attrs(b))


def route_attr(fam, t, p):
    name = RTA.get(t, f"rta{t}")
    if t in (1, 2, 5, 7):
        return f"{name}={ip(fam, p)}"
    if t in (3, 4, 6, 15, 30) and len(p) == 4:
        return f"{name}={struct.unpack('=I', p)[0]}"
    if t == 19:
        return f"newdst={labels(p)}"
    if t == 18:
        (vf,) = struct.unpack_from("=H", p)
        return f"via={FAM.get(vf, vf)}:{ip(vf, p[2:])}"
    if t == 21:
        return f"encap_type={struct.unpack('=H', p[:2])[0]}"
    if t == 22:
        return f"encap{{{encap(p)}}}"
    if t == 9:
        hops, off = [], 0
        while off + 8 <= len(p):
            ln, fl, hp, ifx = struct.unpack_from("=HBBi", p, off)
            inner = " ".join(route_attr(fam, at, ap) for at, ap in attrs(p[off + 8: off + ln]))
            hops.append(f"(if={ifx} w={hp + 1} fl={fl} {inner})")
            off += (ln + 3) & ~3
        return "multipath=" + "".join(hops)
    return f"{name}={p.hex()}"


def nh_attr(fam, t, p):
    name = NHA.get(t, f"nha{t}")
    if t in (1, 5) and len(p) == 4:
        return f"{name}={struct.unpack('=I', p)[0]}"
    if t == 6:
        return f"gateway={ip(fam, p)}"
    if t == 2:
        g = [struct.unpack_from("=IBBH", p, i) for i in range(0, len(p) - 7, 8)]
        return "group=" + ",".join(f"{i}w{w + 1}" for i, w, _, _ in g)
    if t == 3:
        return f"group_type={struct.unpack('=H', p[:2])[0]}"
    if t == 4:
        return "blackhole"
    if t == 7:
        return f"encap_type={struct.unpack('=H', p[:2])[0]}"
    if t == 8:
        return f"encap{{{encap(p)}}}"
    return f"{name}={p.hex()}"


def message(m):
    ln, typ, flags, seq, pid = struct.unpack_from("=IHHII", m)
    body = m[16:ln]
    head = f"{MSG.get(typ, typ)} flags=0x{flags:x}"
    if typ in (24, 25):
        fam, dl, sl, tos, table, proto, scope, rtype, rfl = struct.unpack_from("=BBBBBBBBI", body)
        a = " ".join(route_attr(fam, t, p) for t, p in attrs(body[12:]))
        return (f"{head} {FAM.get(fam, fam)} dst_len={dl} table={table} proto={proto} "
                f"scope={scope} type={RTYPE.get(rtype, rtype)} {a}")
    if typ in (104, 105):
        fam, scope, proto, _r, nfl = struct.unpack_from("=BBBBI", body)
        a = " ".join(nh_attr(fam, t, p) for t, p in attrs(body[8:]))
        return f"{head} {FAM.get(fam, fam)} proto={proto} {a}"
    return f"{head} len={ln} body={body[:32].hex()}"


def dump(path):
    data = open(path, "rb").read()
    name = os.path.basename(path)
    off, n = 0, 0
    while off + 4 <= len(data):
        ver, ftype, flen = struct.unpack_from(">BBH", data, off)
        frame = data[off + 4: off + flen]
        noff = 0
        while noff + 16 <= len(frame):
            (mlen,) = struct.unpack_from("=I", frame, noff)
            n += 1
            print(f"{name}: frame v{ver} t{ftype} len={flen}: {message(frame[noff:noff + mlen])}")
            noff += (mlen + 3) & ~3
        off += flen
    print(f"{name}: {n} messages, {len(data)} bytes")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        dump(p)
