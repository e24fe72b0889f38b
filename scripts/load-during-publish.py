#!/usr/bin/env python3
"""Requests a served release folder from several threads while releases are published into it.

Usage: load-during-publish.py HOST PORT SECONDS [--threads N]

Each thread loops for SECONDS (loopback only): GET /update?from=1 (with gzip), /manifest.json and the
newest database's gzip listed in the manifest it read. Every answer must be whole and of one version:
a delta's SQL must say it goes from 1 to the X-Data-Version it came with, a file must have the size and
SHA-256 its manifest gives (a file of a version that a later release replaced is still served whole, as
versions are immutable). Prints the outcome counts, the data versions seen, and `N passed, N failed`
(one check per request); exits 1 on any failure.
"""
import gzip
import hashlib
import http.client
import json
import sys
import threading
import time

arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
HOST, PORT, SECONDS = arguments[0], int(arguments[1]), float(arguments[2])
THREADS = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 4
lock = threading.Lock()
counts = {"passed": 0, "failed": 0}
outcomes = {}
versions = set()
failures = []


def record(ok, what, detail=""):
    with lock:
        counts["passed" if ok else "failed"] += 1
        outcomes[what] = outcomes.get(what, 0) + 1
        if not ok and len(failures) < 20:
            failures.append(f"{what}: {detail}")


def get(connection, path, headers=None):
    connection.request("GET", path, headers=headers or {})
    response = connection.getresponse()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()


def worker():
    connection = http.client.HTTPConnection(HOST, PORT, timeout=30)
    deadline = time.monotonic() + SECONDS
    while time.monotonic() < deadline:
        try:
            status, headers, body = get(connection, "/update?from=1", {"Accept-Encoding": "gzip"})
            if status == 200:
                to = int(headers["x-data-version"])
                sql = gzip.decompress(body) if headers.get("content-encoding") == "gzip" else body
                record(sql.startswith(f"-- StationAdmin delta from data version 1 to {to}.".encode()), "update 200", sql[:80])
                with lock:
                    versions.add(to)
            else:
                record(status in (204, 303), f"update {status}", body[:200])
            status, _, body = get(connection, "/manifest.json")
            manifest = json.loads(body)
            record(status == 200, "manifest", status)
            newest = next(r for r in manifest["versions"] if r["version"] == manifest["newest"])
            file = newest["database_gzip"]
            status, _, body = get(connection, "/" + file["path"])
            record(status == 200 and len(body) == file["bytes"] and hashlib.sha256(body).hexdigest() == file["sha256"],
                   "database", (status, len(body)))
        except Exception as error:  # a broken connection or a torn answer is a failure
            record(False, "error", repr(error))
            connection.close()
            connection = http.client.HTTPConnection(HOST, PORT, timeout=30)
    connection.close()


threads = [threading.Thread(target=worker) for _ in range(THREADS)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(f"outcomes {dict(sorted(outcomes.items()))}; data versions served {sorted(versions)}")
for failure in failures:
    print("FAIL " + failure)
print(f"{counts['passed']} passed, {counts['failed']} failed")
sys.exit(1 if counts["failed"] or not counts["passed"] else 0)
