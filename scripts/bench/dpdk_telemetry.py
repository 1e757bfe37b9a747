"""A minimal client for DPDK's telemetry socket (`dpdk_telemetry.v2`).

Every DPDK process (router, testpmd, l3fwd) serves its ethdev counters on a Unix
SEQPACKET socket under its runtime directory, without stopping or slowing the data path
(the socket thread runs on the main lcore's CPU set and only reads counters). The bench
samples all tools through it, so every figure comes from the same counter read the same
way. Stdlib only; never writes anything to the process it talks to.
"""

import json
import os
import socket


def runtime_dir(file_prefix):
    """Where the EAL puts this process's runtime files (rte_eal_get_runtime_dir)."""
    if os.geteuid() == 0:
        base = "/var/run/dpdk"
    else:
        base = os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")
    return os.path.join(base, file_prefix)


class Telemetry:
    """One connection to one DPDK process."""

    def __init__(self, file_prefix):
        self.path = os.path.join(runtime_dir(file_prefix), "dpdk_telemetry.v2")
        self.sock = None
        self.max_len = 16384

    def try_connect(self):
        """Connects if the socket is there; returns whether it is connected."""
        if self.sock is not None:
            return True
        if not os.path.exists(self.path):
            return False
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            s.settimeout(5.0)
            s.connect(self.path)
            hello = json.loads(s.recv(1 << 16).decode())
            self.max_len = int(hello.get("max_output_len", 16384))
        except (OSError, ValueError):
            s.close()
            return False
        self.sock = s
        return True

    def query(self, cmd):
        self.sock.send(cmd.encode())
        reply = json.loads(self.sock.recv(max(self.max_len, 1 << 16)).decode())
        return reply.get(cmd.split(",")[0])

    def port_ids(self):
        return self.query("/ethdev/list") or []

    def port_stats(self, port):
        """ethdev counters of `port` (ipackets, opackets, imissed, ...), or None."""
        return self.query("/ethdev/stats,%d" % port)

    def close(self):
        if self.sock is not None:
            self.sock.close()
            self.sock = None
