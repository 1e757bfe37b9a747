#!/usr/bin/env python3
"""Sends raw Ethernet frames on an interface: one frame a line, hex, on stdin.

usage: send_frames.py IFACE < frames.hex
"""
import socket
import sys

s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
n = 0
for line in sys.stdin:
    line = line.strip()
    if line:
        s.send(bytes.fromhex(line))
        n += 1
print(f"sent {n}")
