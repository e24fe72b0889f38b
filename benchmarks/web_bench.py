"""`station-admin sync-postgres` against `psql`'s `\\copy` of the same rows, on a PostgreSQL server
started here (initdb into benchmarks/work, a free port on loopback, fsync on, stopped at the end).

Rows: the STATIONS-station synthetic release synced into an empty database against `\\copy` of the
client database's five tables (exported to CSV beforehand, untimed) into keyed tables; a version
with 1 % changed synced onto the first (alone: no tool does that job); and a split applied over
10,000,000 `completions` rows of 10,000 users (alone), each the median of RUNS.
"""
import os, shutil, sqlite3, statistics, subprocess, sys, time

from serve_bench import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADMIN = os.path.join(ROOT, ".build", "release", "station-admin")
TABLES = ["prefectures", "companies", "lines", "stations", "connections"]


class Server:
    def __init__(self, folder):
        self.folder, self.port = folder, free_port()
        binaries = sorted(os.listdir("/usr/lib/postgresql"), key=int)[-1]
        self.bin = f"/usr/lib/postgresql/{binaries}/bin"
        os.makedirs(folder)
        with open(os.path.join(folder, "password"), "w") as f:
            f.write("bench\n")
        self.as_root = os.getuid() == 0
        if self.as_root:
            subprocess.run(["chown", "-R", "postgres:", folder], check=True)
        self.tool(["initdb", "-D", f"{folder}/data", "-U", "bench", f"--pwfile={folder}/password", "--auth=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8"])
        self.tool(["pg_ctl", "-D", f"{folder}/data", "-l", f"{folder}/server.log", "-w", "start",
                   "-o", f"-p {self.port} -k {folder} -c listen_addresses=127.0.0.1 -c shared_buffers=512MB -c max_wal_size=4GB"])
        self.url = f"postgres://bench:bench@127.0.0.1:{self.port}/postgres"

    def tool(self, command):
        prefix = ["runuser", "-u", "postgres", "--"] if self.as_root else []
        subprocess.run(prefix + [f"{self.bin}/{command[0]}"] + command[1:], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def psql(self, sql):
        return subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", self.url, "-c", sql],
                              check=True, capture_output=True, text=True).stdout.strip()

    def stop(self):
        self.tool(["pg_ctl", "-D", f"{self.folder}/data", "-m", "fast", "-w", "stop"])


def seconds(command):
    os.sync()
    start = time.perf_counter()
    subprocess.run(command, shell=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start


def export_csv(database, folder):
    """The client database's tables as CSV (NULL as an empty unquoted field, psql's default)."""
    os.makedirs(folder, exist_ok=True)
    for table in TABLES:
        subprocess.run(["sqlite3", "-csv", database, f"SELECT * FROM {table}"], check=True,
                       stdout=open(os.path.join(folder, f"{table}.csv"), "w"))


def anchor_schema(database):
    """The same tables, keys and types as ours, for `\\copy`."""
    connection = sqlite3.connect(database)
    statements = ["DROP SCHEMA IF EXISTS anchor CASCADE", "CREATE SCHEMA anchor"]
    types = {"INTEGER": "bigint", "REAL": "double precision", "TEXT": "text"}
    for table in TABLES:
        columns = connection.execute(f"SELECT name, type, \"notnull\", pk FROM pragma_table_info('{table}') ORDER BY cid").fetchall()
        key = [name for name, _, _, pk in sorted(columns, key=lambda c: c[3]) if pk]
        body = ", ".join(f"{name} {types[kind.upper()]}{' NOT NULL' if notnull or pk else ''}" for name, kind, notnull, pk in columns)
        statements.append(f"CREATE TABLE anchor.{table} ({body}, PRIMARY KEY ({', '.join(key)}))")
    return "; ".join(statements)


def web_benchmark(work, admin, only_v1, releases_folder, runs):
    """`only_v1` holds version 1 of the synthetic master, `releases_folder` versions 1 and 2 (1 %
    changed), both unsigned. Returns the running server, for `split_benchmark`."""
    server = Server(os.path.join(work, "postgres"))
    try:
        print("\n# sync-postgres against psql's \\copy, PostgreSQL on loopback", flush=True)
        print("| scenario | ours (s) | anchor | anchor (s) | ratio | ratio per run |")
        print("|---|---:|---|---:|---:|---:|", flush=True)
        client = os.path.join(only_v1, "1", "stations.sqlite")
        export_csv(client, os.path.join(work, "web-csv"))
        copies = " ".join(f"-c \"\\copy anchor.{t} FROM '{os.path.join(work, 'web-csv', t + '.csv')}' CSV\"" for t in TABLES)
        anchor = f"psql -X -q -v ON_ERROR_STOP=1 {server.url} -c \"{anchor_schema(client)}\" {copies}"
        ours = f"{admin} sync-postgres --from {only_v1} --allow-unsigned --database {server.url} --scratch {work}/web-scratch"
        server.psql("CREATE TABLE IF NOT EXISTS completions (user_id bigint NOT NULL, station_cd bigint NOT NULL, date text, memo text, "
                    "updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (user_id, station_cd))")
        mine, theirs = [], []
        for attempt in range(runs + 1):
            server.psql("DROP SCHEMA IF EXISTS station CASCADE; DROP SCHEMA IF EXISTS anchor CASCADE")
            a, b = seconds(ours), seconds(anchor)
            if attempt:
                mine.append(a)
                theirs.append(b)
        ratios = sorted(a / b for a, b in zip(mine, theirs))
        print(f"| sync of the release into an empty database | {statistics.median(mine):.2f} | psql \\copy into keyed tables "
              f"| {statistics.median(theirs):.2f} | {statistics.median(mine) / statistics.median(theirs):.2f} | {ratios[0]:.2f}–{ratios[-1]:.2f} |", flush=True)

        # Version 2 (1 % changed) onto version 1, each run from version 1 again.
        changed = []
        for attempt in range(runs + 1):
            server.psql("DROP SCHEMA IF EXISTS station CASCADE")
            subprocess.run(ours, shell=True, check=True, stdout=subprocess.DEVNULL)
            changed.append(seconds(f"{admin} sync-postgres --from {releases_folder} --allow-unsigned --database {server.url} --scratch {work}/web-scratch"))
        print(f"| sync of a version with 1 % changed | {statistics.median(changed[1:]):.2f} | (alone) | | | |", flush=True)
        return server
    except BaseException:
        server.stop()
        raise


def split_benchmark(server, work, admin, releases_folder, runs):
    """A split over 10,000,000 completions (10,000 users, 1,000 stations each): the new version
    records one split, and every user has a record of its old station."""
    server.psql("TRUNCATE completions")
    server.psql("INSERT INTO completions (user_id, station_cd, date, memo, updated_at) "
                "SELECT u, s, '2024-01-01', NULL, now() FROM generate_series(1, 10000) u, "
                "(SELECT station_cd AS s FROM station.stations ORDER BY station_cd LIMIT 1000) s")
    server.psql("ANALYZE completions")
    old = int(server.psql("SELECT min(station_cd) FROM station.stations"))
    times = []
    for attempt in range(runs + 1):
        master = os.path.join(work, "web-split.sqlite")
        shutil.copy(os.path.join(work, "synth2.sqlite"), master)
        folder = os.path.join(work, "web-split-release")
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(releases_folder, folder)
        new = 99_900_000 + attempt
        subprocess.run([admin, "split", "--db", master, str(old), str(new), "--memo", "split"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([admin, "release", "--db", master, "--out", folder, "--no-verify", "--skip-checks"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        server.psql(f"DELETE FROM completions WHERE station_cd >= 99900000; UPDATE station.release_state SET version = 2")
        times.append(seconds(f"{admin} sync-postgres --from {folder} --allow-unsigned --database {server.url} --scratch {work}/web-scratch"))
    rows = server.psql(f"SELECT count(*) FROM completions WHERE station_cd = {99_900_000 + runs}")
    print(f"| a split over 10,000,000 completions of 10,000 users ({rows} rows copied) | {statistics.median(times[1:]):.2f} | (alone) | | | |", flush=True)
