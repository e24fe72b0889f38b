#!/usr/bin/env python3
"""A release folder served as a hostile network serves it, for the client's tests.

    hostile-server.py FOLDER      prints "listening on PORT" once it listens on 127.0.0.1

The first segment of a request's path picks the behaviour; the rest names the file:
  /honest/F            the file, with ranges (206), as any static host
  /endless-manifest/F  manifest.json is an endless 200 body (no Content-Length); the rest honest
  /huge-manifest/F     manifest.json claims a Content-Length of 10^12 and sends without end
  /endless-range/F     a request with a Range gets an endless 206 body (no Content-Length)
  /slow/F              a .gz file comes one byte a second (its true Content-Length first)
  /lying-length/F      a .gz file claims 1,000 bytes more than it sends, then the connection closes
Every endless or slow answer stops by itself after 60 s or 2 GiB, whichever comes first.
"""
import os
import re
import signal
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# The test that starts it may have SIGTERM blocked in the thread that spawned it: stop on it.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

FOLDER = sys.argv[1]
BOUND_SECONDS = 60
BOUND_BYTES = 2 << 30


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *arguments):
        pass

    def do_GET(self):
        mode, _, name = self.path.lstrip("/").partition("/")
        path = os.path.join(FOLDER, name)
        if not os.path.isfile(path):
            self.send_error(404)
            return
        requested_range = self.headers.get("Range")
        if mode == "endless-manifest" and name == "manifest.json":
            return self.endless(200)
        if mode == "huge-manifest" and name == "manifest.json":
            return self.endless(200, claimed=10 ** 12)
        if mode == "endless-range" and requested_range:
            return self.endless(206)
        with open(path, "rb") as file:
            data = file.read()
        status, body = 200, data
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", requested_range or "")
        if match:
            start = int(match.group(1))
            end = int(match.group(2)) if match.group(2) else len(data) - 1
            status, body = 206, data[start:end + 1]
        self.send_response(status)
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{start + len(body) - 1}/{len(data)}")
        if mode == "lying-length" and name.endswith(".gz"):
            self.send_header("Content-Length", str(len(body) + 1000))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            self.close_connection = True
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if mode == "slow" and name.endswith(".gz"):
            started = time.monotonic()
            for byte in body:
                if time.monotonic() - started > BOUND_SECONDS:
                    break
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(1)
            self.close_connection = True
            return
        self.wfile.write(body)

    def endless(self, status, claimed=None):
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        if claimed is not None:
            self.send_header("Content-Length", str(claimed))
        self.send_header("Connection", "close")
        self.end_headers()
        chunk = b"{" * 65536
        started, sent = time.monotonic(), 0
        try:
            while time.monotonic() - started < BOUND_SECONDS and sent < BOUND_BYTES:
                self.wfile.write(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(f"listening on {server.server_address[1]}", flush=True)
server.serve_forever()
