#!/usr/bin/env python3
"""Records what zebra's dplane_fpm_nl sends, frame by frame, for decoder fixtures and tests.

Listens on ADDR:PORT; each FPM connection N is written as PREFIX.N.0.bin. SIGUSR1 starts the
next part (PREFIX.N.1.bin, ...) at a frame boundary, so one session can be cut into steps
(initial dump, adds, deletes). Only whole frames (4-byte header: version, type, u16 length
incl. header, network order) are written. PREFIX.status holds "<conn> <part> <frames> <bytes>"
after every write, so a driver can wait until zebra is quiet. Never replies. Runs until killed.

usage: fpm_recorder.py ADDR PORT PREFIX
"""
import os
import select
import signal
import socket
import sys
import time

rotate = False


def on_usr1(_sig, _frm):
    global rotate
    rotate = True


def write_status(prefix, conn, part, frames, nbytes):
    tmp = prefix + ".status.tmp"
    with open(tmp, "w") as f:
        f.write(f"{conn} {part} {frames} {nbytes}\n")
    os.replace(tmp, prefix + ".status")


def main():
    global rotate
    addr, port, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    signal.signal(signal.SIGUSR1, on_usr1)
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((addr, port))
    srv.listen(1)
    print(f"listening {addr}:{port}", flush=True)
    conn_n, frames, nbytes = 0, 0, 0
    write_status(prefix, 0, 0, 0, 0)
    while True:
        try:
            conn, peer = srv.accept()
        except InterruptedError:
            continue
        conn_n += 1
        part = 0
        out = open(f"{prefix}.{conn_n}.{part}.bin", "wb", buffering=0)
        print(f"connection {conn_n} from {peer}", flush=True)
        buf = b""
        while True:
            r, _, _ = select.select([conn], [], [], 0.1)
            # After select: a signal that arrived while waiting starts the next part before
            # the data that followed it is read.
            if rotate:
                rotate = False
                out.close()
                part += 1
                out = open(f"{prefix}.{conn_n}.{part}.bin", "wb", buffering=0)
                write_status(prefix, conn_n, part, frames, nbytes)
            if not r:
                continue
            data = conn.recv(65536)
            if not data:
                break
            buf += data
            while len(buf) >= 4:
                flen = int.from_bytes(buf[2:4], "big")
                if flen < 4:
                    print(f"bad frame length {flen}, header {buf[:4].hex()}", flush=True)
                    sys.exit(1)
                if len(buf) < flen:
                    break
                out.write(buf[:flen])
                frames += 1
                nbytes += flen
                buf = buf[flen:]
            write_status(prefix, conn_n, part, frames, nbytes)
            print(f"{time.time():.3f} conn {conn_n} part {part} frames {frames}", flush=True)
        out.close()
        conn.close()
        print(f"connection {conn_n} closed ({len(buf)} bytes of a partial frame dropped)", flush=True)


if __name__ == "__main__":
    main()
