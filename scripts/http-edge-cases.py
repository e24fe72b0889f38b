#!/usr/bin/env python3
"""HTTP edge cases against `station-admin serve` (loopback only, bounded in count and time).

Usage: http-edge-cases.py HOST PORT [--garbage N] [--seed S]

Checks, each printed as `ok` or `FAIL`: 304 on a matching ETag, 206 and 416, If-Range, Accept-Encoding
weights, HEAD without a body, HTTP/1.1 without one Host answered 400,
traversal attempts (`/../master.sqlite`, `%2e%2e`, `/.lock`, `/.building-…`, a folder, `/`) answered
404, a client that disconnects in the middle of a large download, HTTP/1.0's connection close, then N requests with random and
garbage `from` values (no 5xx, every answer one of 200, 204, 303, 400), and the server still answering.
Ends with `N passed, N failed`; exits 1 if any failed.
"""
import http.client
import json
import random
import socket
import sys
import time

arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
HOST, PORT = arguments[0], int(arguments[1])
GARBAGE = int(sys.argv[sys.argv.index("--garbage") + 1]) if "--garbage" in sys.argv else 1000
SEED = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
results = {"passed": 0, "failed": 0}


def request(method, path, headers=None):
    connection = http.client.HTTPConnection(HOST, PORT, timeout=30)
    try:
        connection.putrequest(method, path, skip_accept_encoding=True)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def check(name, condition, detail=""):
    if condition:
        results["passed"] += 1
        print(f"ok   {name}")
    else:
        results["failed"] += 1
        print(f"FAIL {name} {detail}")


status, _, body = request("GET", "/manifest.json")
manifest = json.loads(body)
newest = manifest["newest"]
released = next(r for r in manifest["versions"] if r["version"] == newest)
database = released["database_gzip"]

# Conditional requests.
status, headers, _ = request("GET", "/" + database["path"], {"Range": "bytes=0-0"})
etag = headers.get("etag")
check("a versioned file has its SHA-256 as a strong ETag", etag == f'"{database["sha256"]}"', etag)
check("a versioned file is cached for a year, immutable", headers.get("cache-control") == "public, max-age=31536000, immutable", headers.get("cache-control"))
status, headers, body = request("GET", "/" + database["path"], {"If-None-Match": etag})
check("If-None-Match with the ETag gives 304 and no body", status == 304 and body == b"", status)
status, headers, body = request("GET", "/manifest.json", {"If-None-Match": '"' + __import__("hashlib").sha256(request("GET", "/manifest.json")[2]).hexdigest() + '"'})
check("the manifest revalidates to 304", status == 304, status)
check("the manifest is revalidated on every request", headers.get("cache-control") == "no-cache", headers.get("cache-control"))

# Ranges.
status, headers, body = request("GET", "/" + database["path"], {"Range": "bytes=10-109"})
check("a range gives 206 with exactly its bytes", status == 206 and len(body) == 100
      and headers.get("content-range") == f"bytes 10-109/{database['bytes']}", (status, len(body), headers.get("content-range")))
status, headers, body = request("GET", "/" + database["path"], {"Range": f"bytes={database['bytes'] - 50}-"})
check("an open range gives the file's end", status == 206 and len(body) == 50, (status, len(body)))
status, headers, body = request("GET", "/" + database["path"], {"Range": f"bytes={database['bytes']}-"})
check("a range past the end gives 416", status == 416 and headers.get("content-range") == f"bytes */{database['bytes']}", (status, headers.get("content-range")))

status, headers, body = request("GET", "/" + database["path"], {"Range": "bytes=10-109", "If-Range": etag})
check("If-Range with the file's ETag gives the range", status == 206 and len(body) == 100, (status, len(body)))
status, headers, body = request("GET", "/" + database["path"], {"Range": "bytes=10-109", "If-Range": '"another"'})
check("If-Range with another ETag gives the whole file (200), as nginx does", status == 200 and len(body) == database["bytes"], (status, len(body)))
status, headers, body = request("GET", "/" + database["path"], {"Range": "bytes=10-109", "If-Range": "Wed, 21 Oct 2015 07:28:00 GMT"})
check("If-Range with a date gives the whole file (no Last-Modified to match)", status == 200 and len(body) == database["bytes"], (status, len(body)))

# Accept-Encoding weights (RFC 9110 12.5.3): q=0 refuses gzip, whatever `*` says.
delta_from = next((d["from"] for d in released.get("downloads", []) if d.get("kind") == "delta"), None)
if delta_from is not None:
    for accept, gzip in [("gzip", True), ("gzip;q=0", False), ("gzip; q=0.000", False), ("*;q=1, gzip;q=0", False),
                         ("gzip;q=0.5", True), ("*", True), ("identity", False), ("br, x-gzip", True)]:
        status, headers, body = request("GET", f"/update?from={delta_from}", {"Accept-Encoding": accept})
        check(f"Accept-Encoding: {accept} {'gets' if gzip else 'does not get'} gzip",
              status == 200 and (headers.get("content-encoding") == "gzip") == gzip, (status, headers.get("content-encoding")))

# HEAD.
status, headers, body = request("HEAD", "/" + database["path"])
check("HEAD gives the length and no body", status == 200 and body == b"" and headers.get("content-length") == str(database["bytes"]), (status, len(body)))
status, headers, body = request("HEAD", "/update?from=1")
check("HEAD /update gives no body", status in (200, 303, 204) and body == b"", (status, len(body)))

# Traversal and anything not listed.
for path in ["/../master.sqlite", "/%2e%2e/master.sqlite", "/%2E%2E/%2E%2E/etc/passwd", "/.lock", "/.publishing.json",
             f"/{newest}/", f"/{newest}", "/", f"/{newest}/../manifest.json", "//etc/passwd", f"/{newest}/stations.sqlite.gz/",
             "/review-4.html", "/%00", f"/{database['path']}%00"]:
    status, _, body = request("GET", path)
    check(f"GET {path} is 404", status in (400, 404), status)

# A client that disconnects in the middle of a large download.
with socket.create_connection((HOST, PORT), timeout=30) as client:
    client.sendall(f"GET /{released['database']['path']} HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())
    client.recv(4096)
time.sleep(0.2)
status, _, _ = request("GET", "/manifest.json")
check("the server answers after a client disconnected mid-download", status == 200, status)

# HTTP/1.0: the connection closes after the response unless the client asks to keep it.
def read_until_close(raw_request):
    with socket.create_connection((HOST, PORT), timeout=5) as client:
        client.sendall(raw_request)
        received = b""
        try:
            while chunk := client.recv(65536):
                received += chunk
            return received, True
        except socket.timeout:
            return received, False

received, closed = read_until_close(f"GET /update?from={newest} HTTP/1.0\r\n\r\n".encode())
check("an HTTP/1.0 request is answered, then the connection is closed", closed and received.startswith(b"HTTP/1.1 204"), received[:40])
with socket.create_connection((HOST, PORT), timeout=5) as client:
    answers = []
    for _ in range(2):
        client.sendall(f"HEAD /manifest.json HTTP/1.0\r\nConnection: keep-alive\r\n\r\n".encode())
        answers.append(client.recv(65536))
check("HTTP/1.0 with keep-alive: two answers on one connection, each saying keep-alive",
      all(a.startswith(b"HTTP/1.1 200") and b"connection: keep-alive" in a.lower() for a in answers), answers)
received, closed = read_until_close(f"HEAD /manifest.json HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode())
check("Connection: close is honoured", closed and received.startswith(b"HTTP/1.1 200"), received[:40])

# Host (RFC 9112, 3.2): an HTTP/1.1 request carries exactly one; nginx answers 400 too.
for name, head in [("without Host", b"GET /manifest.json HTTP/1.1\r\n\r\n"),
                   ("with two Hosts", f"GET /manifest.json HTTP/1.1\r\nHost: {HOST}\r\nHost: other\r\n\r\n".encode())]:
    received, closed = read_until_close(head)
    check(f"HTTP/1.1 {name} is 400, and the connection closes", closed and received.startswith(b"HTTP/1.1 400"), received[:40])
received, closed = read_until_close(b"GET /manifest.json HTTP/1.0\r\n\r\n")
check("HTTP/1.0 without Host is answered", closed and received.startswith(b"HTTP/1.1 200"), received[:40])

# Random and garbage `from` values.
generator = random.Random(SEED)
alphabet = "0123456789-+ x%./\\'\"<>;&=?#\u00e9\u99c5"
outcomes = {}
started = time.monotonic()
for _ in range(GARBAGE):
    kind = generator.random()
    if kind < 0.4:
        value = str(generator.randint(-5, newest + 5))
    elif kind < 0.6:
        value = str(generator.randint(-(2 ** 70), 2 ** 70))
    else:
        value = "".join(generator.choice(alphabet) for _ in range(generator.randint(0, 12)))
    quoted = "".join(c if (c.isascii() and c.isalnum()) or c in "-." else "%{:02X}".format(b) for c in value for b in c.encode())
    status, _, _ = request("GET", "/update?from=" + quoted)
    outcomes[status] = outcomes.get(status, 0) + 1
    if time.monotonic() - started > 120:
        break
check(f"{sum(outcomes.values())} random and garbage from values: no 5xx {dict(sorted(outcomes.items()))}",
      all(status in (200, 204, 303, 400) for status in outcomes), outcomes)
status, _, _ = request("GET", "/manifest.json")
check("the server is alive after them", status == 200, status)

print(f"{results['passed']} passed, {results['failed']} failed")
sys.exit(1 if results["failed"] else 0)
