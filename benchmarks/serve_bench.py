"""`station-admin serve` against nginx serving the same release folder, with wrk on loopback.

A release folder of STATIONS synthetic stations at two versions (the second one edited
station, so its delta from version 1 is a few hundred bytes) is served by both, each started
here on a free port: ours with --quiet, nginx with deploy/nginx.conf and its access log off.
Each row runs wrk (2 threads) for DURATION seconds against one server, then the other, and
reports requests per second, the 99th-percentile latency and the transfer rate. Our resident
memory is read from /proc after the first 10,000 requests, after 90,000 and after 100,000
(counted by ApacheBench, as wrk runs for a time), and after the whole run.
"""
import os, re, shutil, socket, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADMIN = os.path.join(ROOT, ".build", "release", "station-admin")

def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def nginx_config(root, port, prefix):
    """deploy/nginx.conf with the lines marked STATION_ADMIN_* pointed here (as ServeTests does)."""
    lines, temps = [], 0
    with open(os.path.join(ROOT, "deploy", "nginx.conf"), encoding="utf-8") as shipped:
        for line in shipped.read().split("\n"):
            indent = line[: len(line) - len(line.lstrip())]
            if "# STATION_ADMIN_PID" in line:
                line = f"pid {prefix}/nginx.pid;"
            elif "# STATION_ADMIN_ERROR_LOG" in line:
                line = f"error_log {prefix}/error.log;"
            elif "# STATION_ADMIN_ACCESS_LOG" in line:
                line = indent + "access_log off;"
            elif "# STATION_ADMIN_LISTEN" in line:
                line = indent + f"listen 127.0.0.1:{port};"
            elif "# STATION_ADMIN_ROOT" in line:
                line = indent + f"root {root};"
            elif "# STATION_ADMIN_TEMP" in line:
                temps += 1
                line = indent + f"{line.split()[0]} {prefix}/temp/{temps};"
            lines.append(line)
    return "\n".join(lines)


def wait_for_port(port, process, name):
    for _ in range(200):
        if process.poll() is not None:
            sys.exit(f"{name} exited with {process.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.1):
                return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"{name} is not listening on {port}")


def exactly(count, url, headers=()):
    """`count` requests on 64 keep-alive connections (ApacheBench: wrk runs for a time, not a count)."""
    command = ["ab", "-q", "-k", "-n", str(count), "-c", "64"] + [part for header in headers for part in ("-H", header)]
    output = subprocess.run(command + [url], check=True, capture_output=True, text=True).stdout
    complete = int(re.search(r"Complete requests:\s+(\d+)", output).group(1))
    failed = int(re.search(r"Failed requests:\s+(\d+)", output).group(1))
    if complete != count or failed:
        sys.exit(f"ab: {complete:,} of {count:,} requests complete, {failed:,} failed:\n{output}")


def wrk(url, connections, duration, headers=()):
    """One wrk run: requests/s, p99 in ms, MB/s, requests done and non-2xx/3xx answers."""
    command = ["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--latency"]
    for header in headers:
        command += ["-H", header]
    output = subprocess.run(command + [url], check=True, capture_output=True, text=True).stdout

    def number(pattern):
        found = re.search(pattern, output)
        if not found:
            sys.exit(f"wrk printed no {pattern!r}:\n{output}")
        return found.group(1)

    def milliseconds(text):
        value, unit = re.match(r"([\d.]+)(us|ms|s)", text).groups()
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    def megabytes(text):
        value, unit = re.match(r"([\d.]+)([KMG]?B)", text).groups()
        return float(value) * {"B": 1 / 2**20, "KB": 1 / 1024, "MB": 1.0, "GB": 1024.0}[unit]

    failed = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    errors = re.search(r"Socket errors: (.*)", output)
    return {
        "rps": float(number(r"Requests/sec:\s+([\d.]+)")),
        "p99": milliseconds(number(r"\s99%\s+(\S+)")),
        "mbps": megabytes(number(r"Transfer/sec:\s+(\S+)")),
        "requests": int(number(r"(\d+) requests in")),
        "failed": int(failed.group(1)) if failed else 0,
        "socket_errors": errors.group(1) if errors else "",
    }


def resident_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def etag(url, headers=()):
    command = ["curl", "-sfI", url] + [part for header in headers for part in ("-H", header)]
    answer = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    found = re.search(r"(?im)^etag:\s*(.+?)\s*$", answer)
    if not found:
        sys.exit(f"no ETag from {url}:\n{answer}")
    return found.group(1)


def build_release(work, stations):
    """Two versions: synthetic stations, then one edited station (a tiny delta from 1 to 2)."""
    database, release = os.path.join(work, "serve.sqlite"), os.path.join(work, "serve-release")

    def admin(*arguments):
        subprocess.run([ADMIN, *arguments], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    admin("synth", "--stations", str(stations), "--seed", "1", "--out", os.path.join(work, "serve-snapshot"))
    admin("init", "--db", database)
    admin("import", "--db", database, os.path.join(work, "serve-snapshot"))
    admin("release", "--db", database, "--out", release, "--no-verify")
    station = subprocess.run(["sqlite3", database, "SELECT min(station_cd) FROM stations"],
                             check=True, capture_output=True, text=True).stdout.strip()
    admin("edit", "stations", station, "weight=2", "--memo", "serve benchmark", "--db", database)
    admin("release", "--db", database, "--out", release, "--no-verify")
    return release


def serve_benchmark(work, stations, duration):
    release = build_release(work, stations)
    full = os.path.join(release, "2", "stations.sqlite.gz")
    delta = os.path.join(release, "2", "delta-from-1.sql.gz")
    print(f"\n## serve against nginx, {stations:,} stations: full database {os.path.getsize(full) / 2**20:.1f} MiB gzip, "
          f"delta from 1 to 2 {os.path.getsize(delta):,} bytes; wrk -t2, {duration} s a row, loopback", flush=True)
    ours_port, nginx_port = free_port(), free_port()
    ours = subprocess.Popen([ADMIN, "serve", "--out", release, "--port", str(ours_port), "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    prefix = os.path.join(work, "nginx")
    for folder in ["temp/1", "temp/2", "temp/3", "temp/4", "temp/5"]:
        os.makedirs(os.path.join(prefix, folder), exist_ok=True)
    with open(os.path.join(prefix, "nginx.conf"), "w") as f:
        f.write(nginx_config(release, nginx_port, prefix))
    nginx = subprocess.Popen(["nginx", "-p", prefix, "-e", os.path.join(prefix, "error.log"),
                              "-c", os.path.join(prefix, "nginx.conf"), "-g", "daemon off;"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(ours_port, ours, "station-admin serve")
        wait_for_port(nginx_port, nginx, "nginx")
        ours_url, nginx_url = f"http://127.0.0.1:{ours_port}", f"http://127.0.0.1:{nginx_port}"
        gzip = "Accept-Encoding: gzip"

        # Memory first, on a server that has answered nothing yet: 10,000, then 80,000, then 10,000.
        memory = [resident_mib(ours.pid)]
        for count in (10_000, 80_000, 10_000):
            exactly(count, f"{ours_url}/update?from=1", [gzip])
            memory.append(resident_mib(ours.pid))

        delta_path = "/2/delta-from-1.sql.gz"
        rows = [
            ("small delta: /update?from=1 (ours), its file (nginx)", 64,
             (f"{ours_url}/update?from=1", [gzip]), (f"{nginx_url}{delta_path}", [gzip])),
            ("304: the delta file, If-None-Match", 64,
             (f"{ours_url}{delta_path}", [f"If-None-Match: {etag(ours_url + delta_path)}"]),
             (f"{nginx_url}{delta_path}", [f"If-None-Match: {etag(nginx_url + delta_path)}"])),
            ("304: /update?from=1 (ours), /manifest.json (nginx)", 64,
             (f"{ours_url}/update?from=1", [gzip, f"If-None-Match: {etag(ours_url + '/update?from=1', [gzip])}"]),
             (f"{nginx_url}/manifest.json", [f"If-None-Match: {etag(nginx_url + '/manifest.json')}"])),
            ("full database, /2/stations.sqlite.gz", 4,
             (f"{ours_url}/2/stations.sqlite.gz", []), (f"{nginx_url}/2/stations.sqlite.gz", [])),
        ]
        print("| request | connections | ours req/s | nginx req/s | ratio | ours p99 (ms) | nginx p99 (ms) | ours MB/s | nginx MB/s |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|", flush=True)
        total = 100_000
        for name, connections, (our_url, our_headers), (their_url, their_headers) in rows:
            mine = wrk(our_url, connections, duration, our_headers)
            theirs = wrk(their_url, connections, duration, their_headers)
            total += mine["requests"]
            for who, result in (("ours", mine), ("nginx", theirs)):
                if result["failed"] or result["socket_errors"]:
                    print(f"# {who}, {name}: {result['failed']} non-2xx/3xx answers; socket errors: {result['socket_errors'] or 'none'}")
            print(f"| {name} | {connections} | {mine['rps']:,.0f} | {theirs['rps']:,.0f} | {mine['rps'] / theirs['rps']:.2f} | "
                  f"{mine['p99']:.2f} | {theirs['p99']:.2f} | {mine['mbps']:,.1f} | {theirs['mbps']:,.1f} |", flush=True)
        memory.append(resident_mib(ours.pid))
        print(f"\nours, resident memory (MiB): at start {memory[0]:.1f}; after 10,000 requests {memory[1]:.1f}; "
              f"after 90,000 {memory[2]:.1f}; after 100,000 {memory[3]:.1f} (last 10,000: {memory[3] - memory[2]:+.1f}); "
              f"after all {total:,} {memory[4]:.1f}", flush=True)
    finally:
        for process in (ours, nginx):
            process.terminate()
        for process in (ours, nginx):
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
    if ours.returncode != 0:
        sys.exit(f"station-admin serve exited with {ours.returncode} on SIGTERM (expected 0)")
    shutil.rmtree(prefix, ignore_errors=True)
