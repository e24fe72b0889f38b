#!/usr/bin/env python3
"""Stalled downloads against `station-admin serve` (loopback only): what a slow or hostile
network holds of the server's memory.

Usage: stalled-downloads.py HOST PORT PIDS PATH COUNT [COUNT ...]

PIDS: the server's process, or several joined by commas (nginx's workers), whose memory is summed.

For each COUNT, opens that many connections with a small receive buffer, each sending one GET
of PATH (with a second request pipelined behind it) and reading nothing, waits until the
server's resident memory stops growing, prints a row `COUNT  VmRSS MiB  VmHWM MiB`, then closes
them all. Bounded: at most 20,000 connections, 30 s of waiting per row.
"""
import resource
import socket
import sys
import time

HOST, PORT, PATH = sys.argv[1], int(sys.argv[2]), sys.argv[4]
PIDS = [int(pid) for pid in sys.argv[3].split(",")]
COUNTS = [min(int(count), 20_000) for count in sys.argv[5:]]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def memory():
    values = {"VmRSS": 0.0, "VmHWM": 0.0}
    for pid in PIDS:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    values[line.split(":")[0]] += int(line.split()[1]) / 1024
    return values["VmRSS"], values["VmHWM"]


request = (f"GET {PATH} HTTP/1.1\r\nHost: {HOST}\r\n\r\n" * 2).encode()
print(f"{'stalled':>8}  {'VmRSS MiB':>10}  {'VmHWM MiB':>10}", flush=True)
for count in COUNTS:
    sockets = []
    for _ in range(count):
        connection = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        connection.connect((HOST, PORT))
        connection.sendall(request)
        sockets.append(connection)
    deadline, last = time.monotonic() + 30, -1.0
    while time.monotonic() < deadline:
        time.sleep(1.5)
        rss, _ = memory()
        if abs(rss - last) < 1:
            break
        last = rss
    rss, hwm = memory()
    print(f"{count:>8}  {rss:>10.1f}  {hwm:>10.1f}", flush=True)
    for connection in sockets:
        connection.close()
    time.sleep(2)
