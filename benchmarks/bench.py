#!/usr/bin/env python3
"""StationAdmin against sqlite3 and sqldiff, scenario by scenario, in the same run.

Each scenario prepares its inputs untimed, runs ours and its anchor once each to warm up,
then alternates them RUNS times; it reports the median wall time of each, their ratio, and
the peak memory (maximum resident set, from GNU time) of ours. Work files go to
benchmarks/work (git-ignored). Run it as benchmarks/run, which installs and builds first.
"""
import argparse, contextlib, csv, glob, itertools, json, os, platform, shutil, sqlite3, statistics, subprocess, sys, time

from serve_bench import serve_benchmark
from web_bench import split_benchmark, web_benchmark

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "benchmarks", "work")
ADMIN = os.path.join(ROOT, ".build", "release", "station-admin")
PHONE = os.path.join(ROOT, ".build", "release", "station-phone")
REAL_OLD = os.path.join(ROOT, "datasets", "ekidata", "2019-12-27")
REAL_NEW = os.path.join(ROOT, "datasets", "ekidata", "2021-03-12")
REAL_SECOND = os.path.join(ROOT, "datasets", "trainlcd", "2025-06-28")

# The anchor's tables: the same keys as ours, so `.import` pays for the same uniqueness.
KEYED_SCHEMA = """
CREATE TABLE company (company_cd INTEGER PRIMARY KEY, rr_cd, company_name, company_name_k, company_name_h, company_name_r, company_url, company_type, e_status, e_sort);
CREATE TABLE line (line_cd INTEGER PRIMARY KEY, company_cd, line_name, line_name_k, line_name_h, line_color_c, line_color_t, line_type, lon, lat, zoom, e_status, e_sort);
CREATE TABLE station (station_cd INTEGER PRIMARY KEY, station_g_cd, station_name, station_name_k, station_name_r, line_cd, pref_cd, post, address, lon, lat, open_ymd, close_ymd, e_status, e_sort);
CREATE TABLE connection (line_cd, station_cd1, station_cd2, PRIMARY KEY (line_cd, station_cd1, station_cd2)) WITHOUT ROWID;
CREATE TABLE pref (pref_cd INTEGER PRIMARY KEY, pref_name);
"""


def path(*parts):
    return os.path.join(WORK, *parts)


def run(command, shell=False, stdout=subprocess.DEVNULL):
    subprocess.run(command, check=True, shell=shell, stdout=stdout, stderr=subprocess.PIPE)


def timed(command):
    """Wall seconds and peak resident memory (MiB) of one command, through GNU time. The command
    starts with nothing of the ones before left to write back: a 370 MB master copied just before
    a change import was written back during it."""
    os.sync()
    start = time.perf_counter()
    result = subprocess.run(["/usr/bin/time", "-f", "%M", "bash", "-o", "pipefail", "-c", command],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {command}\n{result.stderr}")
    peak_kib = int(result.stderr.strip().splitlines()[-1])
    return wall, peak_kib / 1024


def check_status(database, folder):
    """The imported database holds exactly the generated rows (`status` against the CSV files)."""
    status = json.loads(subprocess.run([ADMIN, "status", "--db", database, "--json"], check=True, capture_output=True, text=True).stdout)
    rows = {table["table"]: table["rows"] for table in status["tables"]}
    files = csv_files(folder)
    expected = {}
    for table, name in [("companies", "company"), ("lines", "line"), ("stations", "station"), ("connections", "connection")]:
        with open(files[name], encoding="utf-8") as f:
            expected[table] = sum(1 for _ in f) - 1
    for table, count in expected.items():
        if rows[table] != count:
            sys.exit(f"status says {rows[table]:,} {table}, the generated files hold {count:,}")
    print("# check: the import matches `status`: " + ", ".join(f"{rows[t]:,} {t}" for t in expected), flush=True)


def csv_files(folder):
    names = sorted(os.listdir(folder))
    def find(prefix):
        return os.path.join(folder, next(n for n in names if n.startswith(prefix)))
    return {"company": find("company"), "line": find("line"), "station": find("station"), "connection": find("join")}


def curated_master(source, target, rows=1000):
    """`source` with `rows` stations edited by a curator (one plan, one version), so that the next
    import holds their upstream values apart and merges three ways: half of them stations the 1 %
    change also changes (in other columns: the change never touches `station_name_r`), half not.
    No edit conflicts with the change, so the import commits."""
    def stations(folder):
        with open(os.path.join(folder, "station.csv"), newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            next(reader)
            return {row[0]: row for row in reader}
    before, after = stations(path("snapshot1")), stations(path("snapshot2"))
    changed = sorted((code for code in before if code in after and before[code] != after[code]), key=int)
    unchanged = sorted((code for code in before if after.get(code) == before[code]), key=int)
    chosen = changed[::max(1, len(changed) // (rows // 2))][:rows // 2] + unchanged[::max(1, len(unchanged) // (rows // 2))][:rows // 2]
    plan = path("curated-plan.jsonl")
    with open(plan, "w", encoding="utf-8") as f:
        for code in chosen:
            f.write(json.dumps({"op": "edit", "table": "stations", "key": int(code), "set": {"station_name_r": f"curated {code}"}}) + "\n")
    shutil.copy(source, target)
    run([ADMIN, "apply", "--db", target, plan, "--memo", f"{len(chosen)} curated romaji"])


def sqlite_import(database, folder, keyed):
    """The anchor's load: sqlite3 .import of the four CSVs (into keyed tables when asked)."""
    files = csv_files(folder)
    script = (KEYED_SCHEMA if keyed else "") + "\n".join(
        f".import --csv {'--skip 1 ' if keyed else ''}{files[table]} {table}" for table in ["company", "line", "station", "connection"])
    return f"rm -f {database} && sqlite3 {database} <<'SQL'\n{script}\nSQL"


def sqlite_import_all(database, folder):
    """The anchor's load of a second source: sqlite3 .import of every CSV file of `folder`, each
    into a table of its own named by its header (TrainLCD's names, such as `3!stations.csv`,
    are not table names)."""
    script = "\n".join(f".import --csv '{os.path.join(folder, name)}' t{index}"
                       for index, name in enumerate(sorted(n for n in os.listdir(folder) if n.endswith(".csv"))))
    return f"rm -f {database} && sqlite3 {database} <<'SQL'\n{script}\nSQL"


# The master's table of each anchor table: its column types and keys are the normalized anchor's.
MASTER_TABLES = {"company": "companies", "line": "lines", "station": "stations", "connection": "connections"}


def sqlite_normalized_import(database, folder, master, log=False):
    """sqlite3 loading the four CSVs as the master holds them: `.import` into temporary tables,
    then every row into tables of `master`'s column types and keys, an empty field and
    `0000-00-00` NULL; with `log`, in the same transaction one `updates` row per row (its version,
    table, key and kind), as a first import writes its log. A text diff of the files as `.import` loads them is not the change the
    master sees: ekidata's 2021 files write `0000-00-00` where 2019's left a date empty, and
    `135.60` and `135.6` are one number."""
    files = csv_files(folder)
    with contextlib.closing(sqlite3.connect(master)) as db:
        columns = {table: db.execute(f"SELECT name, type, pk FROM pragma_table_info('{name}')").fetchall()
                   for table, name in MASTER_TABLES.items()}
    script = ["PRAGMA temp_store = MEMORY;", "BEGIN;"]
    if log:
        script.append("CREATE TABLE updates (id INTEGER PRIMARY KEY, user_version INTEGER NOT NULL, table_name TEXT NOT NULL, "
                      "key_id TEXT NOT NULL, type TEXT NOT NULL);")
    for table in MASTER_TABLES:
        # ekidata's columns come in the master's order (its own columns, such as `weight`, after
        # them), under names that have changed (`add`, now `address`): matched by place.
        with open(files[table], encoding="utf-8", newline="") as f:
            names = [name for name, _, _ in columns[table]][:len(next(csv.reader(f)))]
        types = {name: type_ for name, type_, _ in columns[table]}
        keys = [name for name, _, pk in sorted(columns[table], key=lambda column: column[2]) if pk]
        def value(name):
            if name in keys:
                return name
            return f"NULLIF(NULLIF({name}, ''), '0000-00-00')" if name.endswith("_ymd") else f"NULLIF({name}, '')"
        script += [f"CREATE TEMP TABLE raw_{table} ({', '.join(names)});",
                   f".import --csv --skip 1 --schema temp {files[table]} raw_{table}",
                   f"CREATE TABLE {table} ({', '.join(f'{name} {types[name]}' for name in names)}, "
                   f"PRIMARY KEY ({', '.join(keys)})){' WITHOUT ROWID' if len(keys) > 1 else ''};",
                   f"INSERT INTO {table} SELECT {', '.join(map(value, names))} FROM temp.raw_{table};"]
        if log:
            key = " || '/' || ".join(keys)
            script.append(f"INSERT INTO updates (user_version, table_name, key_id, type) "
                          f"SELECT 1, '{MASTER_TABLES[table]}', {key}, 'INSERT' FROM {table};")
    script.append("COMMIT;")
    return f"rm -f {database} && sqlite3 {database} <<'SQL'\n" + "\n".join(script) + "\nSQL"


def release_pipeline(master, out, base_database, schema_from):
    """The fair release anchor: what a person would script with the standard tools to make the
    same files, one step after another. sqlite3 builds the client tables from the master
    (ATTACH, INSERT … SELECT in key order, the same indexes, user_version, VACUUM), gzip -6 the
    database, sha256sum every file, and sqldiff --primarykey old new | gzip -6 for the delta the
    release writes (from version 1)."""
    schema = subprocess.run(["sqlite3", schema_from, ".schema"], check=True, capture_output=True, text=True).stdout
    tables = [line.split()[2] for line in schema.splitlines() if line.startswith("CREATE TABLE")]
    creates = "\n".join(line for line in schema.splitlines() if line.startswith("CREATE TABLE"))
    indexes = "\n".join(line for line in schema.splitlines() if line.startswith("CREATE INDEX"))
    keys = {"prefectures": "pref_cd", "companies": "company_cd", "lines": "line_cd", "stations": "station_cd",
            "connections": "line_cd, station_cd1, station_cd2"}
    fills = "\n".join(f"INSERT INTO {t} SELECT * FROM master.{t} ORDER BY {keys[t]};" for t in tables if t in keys)
    database = os.path.join(out, "stations.sqlite")
    return (f"rm -rf {out} && mkdir -p {out} && sqlite3 {database} <<'SQL'\n"
            f"ATTACH '{master}' AS master;\nBEGIN;\n{creates}\n{fills}\n{indexes}\nCOMMIT;\nDETACH master;\n"
            f"PRAGMA user_version = 2;\nVACUUM;\nSQL\n"
            f"gzip -6 -n -k {database} && "
            f"sqldiff --primarykey {base_database} {database} | gzip -6 -n > {out}/delta-from-1.sql.gz && "
            f"sha256sum {database} {database}.gz {out}/delta-from-1.sql.gz > {out}/SHA256SUMS")


def verified_release_pipeline(master, out, base_database):
    """The default `release` (checks and verify) has this anchor: the pipeline above, then what a
    person would run to check it (session 12): the delta applied by sqlite3 to a copy of version
    1 in one transaction, sqldiff --primarykey of the result against the new database (read, not
    required empty: sqldiff's own REAL literals do not round-trip), PRAGMA integrity_check,
    gunzip -t, sha256sum -c."""
    database = os.path.join(out, "stations.sqlite")
    phone = os.path.join(out, "phone.sqlite")
    return (release_pipeline(master, out, base_database, base_database) + " && "
            f"cp {base_database} {phone} && "
            f"{{ echo 'BEGIN;'; gunzip -c {out}/delta-from-1.sql.gz; echo 'COMMIT;'; }} | sqlite3 -bail {phone} && "
            f"sqldiff --primarykey {phone} {database} > /dev/null && "
            f"test \"$(sqlite3 {database} 'PRAGMA integrity_check')\" = ok && "
            f"gunzip -t {database}.gz {out}/delta-from-1.sql.gz && sha256sum -c --quiet {out}/SHA256SUMS")


def require_space_for_history(stations, versions):
    """A history takes about 420 bytes a station a version on disk (2.0 GB at 100,000 stations and
    50 versions, 20 GB at 1M): a run the disk cannot hold is refused before it starts, not stopped
    by a full disk at version 46 (session 22)."""
    needed = stations * versions * 420
    free = shutil.disk_usage(WORK).free
    if free < needed * 1.2:
        sys.exit(f"the history table needs about {needed / 1e9:.1f} GB in {WORK} and {free / 1e9:.1f} GB are free: "
                 "free some, or pass a smaller --history-stations or --history")


def history_benchmark(stations, lengths, runs):
    """Release cost against history length, as weekly releases make it: a master of 1 … max(lengths)
    versions at `stations` stations, each version 1% of the stations changed and released into one
    folder as it is made (untimed, --no-verify). At each length N, the release of version N is timed
    into a copy of the folder holding releases 1 … N − 1. A release renders the deltas from its
    checkpoints and joins the rest (docs/publishing.md, "What a release renders and what it joins"); the second
    table compares what each phone downloads with the delta rendered for it alone."""
    run([ADMIN, "synth", "--stations", str(stations), "--seed", "11", "--out", path("history", "s1")])
    master = path("history", "master.sqlite")
    folder = path("history", "folder")
    run([ADMIN, "init", "--db", master])
    run([ADMIN, "import", "--db", master, path("history", "s1")])
    print(f"\n# release cost against history length, {stations:,} stations, each version 1% changed and released; median of {runs} runs")
    print("| versions | deltas rendered | deltas joined | release, no verify (s) | ratio to 1 version | our peak memory (MiB) |")
    print("|---:|---:|---:|---:|---:|---:|", flush=True)
    version = 1
    base = None  # the release with no delta: the database alone
    last = None
    for length in lengths:
        while version < length:
            run([ADMIN, "release", "--db", master, "--out", folder, "--no-verify", "--skip-checks", "--version", str(version)])
            previous, following = path("history", f"s{version}"), path("history", f"s{version + 1}")
            run([ADMIN, "synth", "--from", previous, "--change", "1", "--seed", str(100 + version), "--out", following])
            run([ADMIN, "import", "--db", master, following])
            shutil.rmtree(previous)
            version += 1
        out = path("history", "out")
        times, peaks = [], []
        for attempt in range(runs + 1):
            # Hard links: a release never writes an older version's files (the manifest and the
            # lock file are copied, the manifest being replaced by a rename).
            copy = f"rm -rf {out} && " + (f"cp -al {folder} {out} && cp --remove-destination {folder}/manifest.json {folder}/.lock {out}/"
                                          if os.path.exists(folder) else "true")
            run(copy, shell=True)
            wall, peak = timed(f"{ADMIN} release --db {master} --out {out} --no-verify --version {length}")
            if attempt > 0:
                times.append(wall)
                peaks.append(peak)
        with open(os.path.join(out, "manifest.json")) as f:
            deltas = json.load(f)["versions"][-1]["deltas"]
        joined = sum(1 for delta in deltas if delta.get("via") is not None)
        median = statistics.median(times)
        if not deltas:
            base = median
        ratio = f"{median / base:.2f}" if base else "–"
        print(f"| {length} | {len(deltas) - joined} | {joined} | {median:.2f} ({min(times):.2f}–{max(times):.2f}) | {ratio} | {max(peaks):.0f} |", flush=True)
        last = (length, deltas, out)
    if last and last[0] > 1:
        download_ratios(master, *last)


def download_ratios(master, version, deltas, out):
    """What each phone downloads from release `version` against the delta rendered for it alone."""
    print(f"\n# what a phone downloads from release {version}: its file against the delta from its version rendered alone (gzip bytes)")
    print("| from | steps | downloaded | rendered alone | ratio |")
    print("|---:|---:|---:|---:|---:|")
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    by_version = {entry["version"]: {d["from"]: d for d in entry["deltas"]} for entry in manifest["versions"]}

    def steps(delta):
        return 1 if delta.get("via") is None else 1 + steps(by_version[delta["via"]][delta["from"]])
    ratios = []
    for delta in deltas:
        alone = path("history", "alone.sql.gz")
        run([ADMIN, "delta", "--db", master, "--from", str(delta["from"]), "--to", str(version), "--gzip", "--output", alone])
        size = os.path.getsize(alone)
        ratio = delta["file"]["bytes"] / size
        ratios.append(ratio)
        if delta.get("via") is not None or delta["from"] % 10 == 1:
            print(f"| {delta['from']} | {steps(delta)} | {delta['file']['bytes']:,} | {size:,} | {ratio:.3f} |")
    print(f"\nevery phone: {min(ratios):.3f}–{max(ratios):.3f}", flush=True)


class Scenario:
    def __init__(self, name, ours, anchor, prepare=None, anchor_label=""):
        self.name, self.ours, self.anchor, self.prepare, self.anchor_label = name, ours, anchor, prepare, anchor_label


def measure(scenario, runs):
    ours, anchor, peaks = [], [], []
    for attempt in range(runs + 1):
        for which in ("ours", "anchor"):
            if scenario.prepare and which == "ours":  # the anchors read inputs that never change
                scenario.prepare()
            # What the preparation wrote (a 370 MB master copied at 1M) reaches the disk before the
            # clock starts, not inside the timed run: both sides start from a settled disk.
            os.sync()
            wall, peak = timed(scenario.ours if which == "ours" else scenario.anchor)
            if attempt == 0:
                continue  # warm-up
            (ours if which == "ours" else anchor).append(wall)
            if which == "ours":
                peaks.append(peak)
    # Each run's ratio against the anchor run beside it: the spread a noisy host gives the ratio.
    pairs = sorted(o / a for o, a in zip(ours, anchor))
    return statistics.median(ours), statistics.median(anchor), max(peaks), (pairs[0], pairs[-1])


def machine():
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    swift = subprocess.run(["swift", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    sqlite = subprocess.run(["sqlite3", "--version"], capture_output=True, text=True).stdout.split()[0]
    return f"{platform.system()} {platform.release()} {platform.machine()}, {os.cpu_count()} cores ({cpu}), {memory:.0f} GiB; {swift}; sqlite3 {sqlite}"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--stations", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--history-stations", type=int, default=100_000)
    parser.add_argument("--history", default="1,10,50", help="history lengths to release at (versions)")
    parser.add_argument("--history-only", action="store_true", help="only the release cost against history length")
    parser.add_argument("--serve-only", action="store_true", help="only `serve` against nginx, with wrk")
    parser.add_argument("--serve-seconds", type=int, default=10, help="wrk's duration for each serve row")
    parser.add_argument("--web-only", action="store_true", help="only `sync-postgres` against psql's \\copy (starts PostgreSQL)")
    parser.add_argument("--scenarios", help="only the main table's scenarios whose names contain one of these "
                        "comma-separated words (e.g. scattered,change); no history or serve tables then")
    args = parser.parse_args()
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    lengths = [int(n) for n in args.history.split(",")] if args.history else []
    if lengths and (args.history_only or not (args.serve_only or args.scenarios)):
        # Before the main table: a full run reaches the history after several minutes.
        require_space_for_history(args.history_stations, max(lengths))
    if args.history_only:
        print(f"# machine: {machine()}", flush=True)
        os.makedirs(path("history"))
        history_benchmark(args.history_stations, lengths, max(1, args.runs // 2))
        return
    if args.serve_only:
        print(f"# machine: {machine()}", flush=True)
        serve_benchmark(WORK, args.stations, args.serve_seconds)
        return
    n = args.stations
    label = f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}k"

    def admin(*arguments):
        return " ".join([ADMIN] + list(arguments))

    print(f"# machine: {machine()}", flush=True)
    print(f"# generating {n:,} stations and a next snapshot with 1% changed ...", file=sys.stderr, flush=True)
    run([ADMIN, "synth", "--stations", str(n), "--seed", "1", "--out", path("snapshot1")])
    run([ADMIN, "synth", "--from", path("snapshot1"), "--change", "1", "--seed", "2", "--out", path("snapshot2")])
    # A broken export: every station anywhere in Japan, so nearly every connection is too long
    # (about 960,000 findings at 1M): the findings' cost against the version's.
    run([ADMIN, "synth", "--stations", str(n), "--seed", "3", "--scattered", "--out", path("scattered")])

    # Templates, built once: master databases at each starting version, and the anchors' inputs.
    run(admin("init", "--db", path("empty.sqlite")), shell=True)
    shutil.copy(path("empty.sqlite"), path("real1.sqlite"))
    run(admin("import", "--db", path("real1.sqlite"), REAL_OLD), shell=True)
    shutil.copy(path("empty.sqlite"), path("synth1.sqlite"))
    run(admin("import", "--db", path("synth1.sqlite"), path("snapshot1")), shell=True)
    check_status(path("synth1.sqlite"), path("snapshot1"))
    shutil.copy(path("real1.sqlite"), path("real2.sqlite"))
    run(admin("import", "--db", path("real2.sqlite"), REAL_NEW), shell=True)
    # A second source of the same stations, shaped as TrainLCD publishes (synth --source).
    run([ADMIN, "synth", "--from", path("snapshot1"), "--source", "trainlcd", "--seed", "4", "--out", path("second1")])
    shutil.copy(path("synth1.sqlite"), path("synth2.sqlite"))
    run(admin("import", "--db", path("synth2.sqlite"), path("snapshot2")), shell=True)
    curated_master(path("synth1.sqlite"), path("synth1-curated.sqlite"))
    run(sqlite_import(path("anchor1.sqlite"), path("snapshot1"), keyed=True), shell=True)
    run(sqlite_normalized_import(path("anchor-real1.sqlite"), REAL_OLD, path("empty.sqlite")), shell=True)
    run(sqlite_import(path("anchor2.sqlite"), path("snapshot2"), keyed=True), shell=True)
    # The delta's anchor diffs the client databases of versions 1 and 2: version 1 is built here,
    # version 2 is what the release scenario (run just before it) leaves in run-release/.
    run(admin("release", "--db", path("synth2.sqlite"), "--out", path("releases"), "--version", "1", "--no-verify"), shell=True)
    run([ADMIN, "keys", "generate", "--out", path("signing-key")])

    def web_rows():
        """`sync-postgres` on the same synthetic data: versions 1 and 2 released unsigned."""
        both = path("web-release-2")
        shutil.rmtree(both, ignore_errors=True)
        shutil.copytree(path("releases"), both)
        run([ADMIN, "release", "--db", path("synth2.sqlite"), "--out", both, "--no-verify"])
        server = web_benchmark(WORK, ADMIN, path("releases"), both, max(1, args.runs // 2))
        try:
            split_benchmark(server, WORK, ADMIN, both, max(1, args.runs // 2))
        finally:
            server.stop()

    if args.web_only:
        web_rows()
        return

    def fresh(source, target):
        return lambda: shutil.copy(path(source), path(target))

    def make_long_lines():
        """The second shape (benchmarks/long_lines.py), made once: its snapshots, its master at
        version 1 and the anchors' keyed loads."""
        made = path(f"long-lines-{n}.made")
        if os.path.exists(made) and os.path.exists(path("long1.sqlite")):
            return
        for old in glob.glob(path("long-lines-*.made")) + [path("long1.sqlite")]:
            if os.path.exists(old):
                os.remove(old)
        per_line = 25
        run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "long_lines.py"), path("long1"),
             path("long2"), os.path.join(path("snapshot1"), "pref.csv"), "--lines", str(max(1, n // per_line)),
             "--per-line", str(per_line)])
        shutil.copy(path("empty.sqlite"), path("long1-template.sqlite"))
        run(admin("import", "--db", path("long1-template.sqlite"), path("long1")), shell=True)
        run(sqlite_import(path("anchor-long1.sqlite"), path("long1"), keyed=True), shell=True)
        run(sqlite_import(path("anchor-long2.sqlite"), path("long2"), keyed=True), shell=True)
        os.rename(path("long1-template.sqlite"), path("long1.sqlite"))
        open(made, "w").close()

    # The second shape costs minutes to make: only when its rows are run ("lines", or a word
    # naming one of its rows, such as "long lines: change").
    with_long_lines = not args.scenarios or any(word in "long lines" or "long lines" in word for word in args.scenarios.split(","))
    if with_long_lines:
        make_long_lines()

    def clean(folder):
        return lambda: shutil.rmtree(path(folder), ignore_errors=True)

    def released_version_2():
        """The delta's anchor compares version 2's client database with version 1's: the release
        scenarios leave it in run-release, a run of the delta scenario alone makes it."""
        if not os.path.exists(path("run-release", "2", "stations.sqlite")):
            run([ADMIN, "release", "--db", path("synth2.sqlite"), "--out", path("run-release"), "--no-verify"])

    def phone_release():
        """Versions 1 and 2 in one folder, so that version 2 has a delta from 1 for the phone."""
        if not os.path.exists(path("phone-release", "2", "delta-from-1.sql.gz")):
            shutil.rmtree(path("phone-release"), ignore_errors=True)
            shutil.copytree(path("releases"), path("phone-release"))
            run([ADMIN, "release", "--db", path("synth2.sqlite"), "--out", path("phone-release"), "--no-verify"])

    served = {}

    def serve_phone_release():
        """`serve` over the phone's release folder on loopback, once; its base URL."""
        phone_release()
        if "url" not in served:
            server = subprocess.Popen([ADMIN, "serve", "--out", path("phone-release"), "--port", "0"],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for line in server.stdout:
                if "http://127.0.0.1:" in line:
                    port = "".join(itertools.takewhile(str.isdigit, line.split("http://127.0.0.1:")[1]))
                    served["url"] = f"http://127.0.0.1:{port}/"
                    break
            served["server"] = server
        return served["url"]

    app_schema = "CREATE TABLE {0}visits (id INTEGER PRIMARY KEY, station_cd INTEGER NOT NULL, day TEXT, note TEXT); " \
                 "CREATE INDEX {0}visits_by_station ON visits (station_cd);"

    def phones_at_version_1():
        """Two copies of a phone at version 1 with 100,000 rows of the app's own table and 10,000
        records: one for station-phone, one for the standard tools."""
        serve_phone_release()
        template = path("phone-template.sqlite")
        if not os.path.exists(template):
            shutil.copy(path("releases/1/stations.sqlite"), template)
            run(["sqlite3", template, app_schema.format("") +
                 " WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)"
                 " INSERT INTO visits SELECT i, 1000000 + i % 5000, '2024-01-01', 'visit ' || i FROM n;"
                 " INSERT OR IGNORE INTO completions (station_cd, date, memo, updated_at) SELECT station_cd, '2020-01-01', 'kept', 1 FROM stations LIMIT 10000;"])
        for name in ("phone-full.sqlite", "anchor-full.sqlite"):
            for leftover in [path(name)] + [path(f) for f in os.listdir(WORK) if f.startswith(name + ".")]:
                shutil.rmtree(leftover, ignore_errors=True) if os.path.isdir(leftover) else os.path.exists(leftover) and os.remove(leftover)
            shutil.copy(template, path(name))
        for name in ("anchor-new.sqlite", "anchor-new.sqlite.gz", "anchor-carry-over.sql"):
            if os.path.exists(path(name)):
                os.remove(path(name))

    def full_update_anchor():
        return (f"url=$(cat {path('served-url')}) && "
                f"curl -sf -o {path('anchor-new.sqlite.gz')} \"${{url}}2/stations.sqlite.gz\" && "
                f"curl -sf -o {path('anchor-carry-over.sql')} \"${{url}}2/carry-over.sql\" && "
                f"gunzip -f {path('anchor-new.sqlite.gz')} && "
                f"{{ echo \"ATTACH '{path('anchor-new.sqlite')}' AS incoming; BEGIN;\"; cat {path('anchor-carry-over.sql')}; "
                f"echo \"{app_schema.format('incoming.')} INSERT INTO incoming.visits SELECT * FROM main.visits; COMMIT;\"; }} "
                f"| sqlite3 -bail {path('anchor-full.sqlite')} && mv {path('anchor-new.sqlite')} {path('anchor-full.sqlite')}")

    def full_update_in_place_anchor():
        """The same, but the new content copied into the working file by SQLite's online backup
        (`.restore`), as an app whose connections stay open needs: the file is not replaced."""
        return full_update_anchor().replace(f"&& mv {path('anchor-new.sqlite')} {path('anchor-full.sqlite')}",
                                            f"&& sqlite3 {path('anchor-full.sqlite')} \".restore '{path('anchor-new.sqlite')}'\"")

    def full_update_replace_tables_anchor():
        """The standard tools doing what StationClient's full path does: the release database
        attached to the app's own file, each release table replaced in one transaction (DELETE,
        then INSERT … SELECT), the manifest's splits copied in `completions`, the version set; the
        app's objects untouched, the file kept."""
        new = path("anchor-new.sqlite")
        splits = ("python3 -c \"import json, sys; m = json.load(open(sys.argv[1])); v = [x for x in m['versions'] if x['version'] == m['newest']][0]; "
                  "[print(f'INSERT OR IGNORE INTO main.completions (station_cd, date, memo, updated_at) SELECT {s[\\\"new\\\"]}, date, memo, updated_at "
                  "FROM main.completions WHERE station_cd = {s[\\\"old\\\"]};') for s in v['splits'] if s['version'] > 1]\" "
                  f"{path('phone-release/manifest.json')}")
        return (f"url=$(cat {path('served-url')}) && "
                f"curl -sf -o {new}.gz \"${{url}}2/stations.sqlite.gz\" && gunzip -f {new}.gz && "
                f"{{ echo \"ATTACH '{new}' AS incoming; BEGIN;\"; "
                f"sqlite3 {new} \"SELECT 'DELETE FROM main.' || name || '; INSERT INTO main.' || name || ' SELECT * FROM incoming.' || name || ';' "
                f"FROM sqlite_master WHERE type = 'table' AND name <> 'completions'\"; "
                f"{splits}; echo 'PRAGMA main.user_version = 2; COMMIT;'; }} | sqlite3 -bail {path('anchor-full.sqlite')}")

    def prepare_full_update():
        phones_at_version_1()
        with open(path("served-url"), "w") as f:
            f.write(served["url"])

    scenarios = [
        Scenario("real: import 2021-03-12 over 2019-12-27",
                 admin("import", "--db", path("run.sqlite"), REAL_NEW),
                 sqlite_import(path("anchor-run.sqlite"), REAL_NEW, keyed=False),
                 fresh("real1.sqlite", "run.sqlite"), "sqlite3 .import"),
        # `.import` only loads; the import also compares with the master and writes the change.
        # This anchor does both with the standard tools: the new files loaded into tables of the
        # master's types and keys (`sqlite_normalized_import`), sqldiff against the old snapshot's,
        # and sqlite3 running that SQL in a copy of it (WAL, as a master is) in one transaction. It
        # leaves out what ours writes besides the rows (the log, the history, upstream's record,
        # the findings) and its report: the standard tools' floor for the change itself.
        Scenario("real: import 2021-03-12 over 2019-12-27, against a change that is written",
                 admin("import", "--db", path("run.sqlite"), REAL_NEW),
                 "set -e\n" + sqlite_normalized_import(path("anchor-real2.sqlite"), REAL_NEW, path("empty.sqlite")) + "\n"
                 f"sqldiff --primarykey {path('anchor-real1.sqlite')} {path('anchor-real2.sqlite')} > {path('sqldiff-real.sql')} && "
                 f"sqlite3 {path('anchor-real-applied.sqlite')} BEGIN '.read {path('sqldiff-real.sql')}' COMMIT",
                 lambda: (shutil.copy(path("real1.sqlite"), path("run.sqlite")),
                          shutil.copy(path("anchor-real1.sqlite"), path("anchor-real-applied.sqlite")),
                          run(["sqlite3", path("anchor-real-applied.sqlite"), "PRAGMA journal_mode = WAL"])),
                 "sqlite3 .import into the master's types, sqldiff, sqlite3 runs its SQL"),
        # A second source fills what the primary lacks (readings, its own stations) and records
        # where it differs; `.import` of the same files is the floor for reading them.
        Scenario("real: a second source, TrainLCD 2025-06-28 over ekidata 2021-03-12",
                 admin("import", "--db", path("run.sqlite"), "--source", "trainlcd", REAL_SECOND),
                 sqlite_import_all(path("anchor-run.sqlite"), REAL_SECOND),
                 fresh("real2.sqlite", "run.sqlite"), "sqlite3 .import of its files"),
        Scenario(f"{label} a second source over the initial import (synth --source trainlcd)",
                 admin("import", "--db", path("run.sqlite"), "--source", "trainlcd", path("second1")),
                 sqlite_import_all(path("anchor-run.sqlite"), path("second1")),
                 fresh("synth1.sqlite", "run.sqlite"), "sqlite3 .import of its files"),
        Scenario(f"{label} initial import",
                 admin("import", "--db", path("run.sqlite"), path("snapshot1")),
                 sqlite_import(path("anchor-run.sqlite"), path("snapshot1"), keyed=True),
                 fresh("empty.sqlite", "run.sqlite"), "sqlite3 .import, keyed"),
        Scenario(f"{label} initial import, against the rows and a log row each",
                 admin("import", "--db", path("run.sqlite"), path("snapshot1")),
                 sqlite_normalized_import(path("anchor-run.sqlite"), path("snapshot1"), path("empty.sqlite"), log=True),
                 fresh("empty.sqlite", "run.sqlite"), "sqlite3 .import, then every row keyed and one updates row each, one transaction"),
        Scenario(f"{label} scattered import (a finding per station)",
                 admin("import", "--db", path("run.sqlite"), path("scattered")),
                 sqlite_import(path("anchor-run.sqlite"), path("scattered"), keyed=True),
                 fresh("empty.sqlite", "run.sqlite"), "sqlite3 .import, keyed"),
        Scenario(f"{label} change import (1%)",
                 admin("import", "--db", path("run.sqlite"), path("snapshot2")),
                 f"sqldiff --primarykey {path('anchor1.sqlite')} {path('anchor2.sqlite')} > {path('sqldiff.sql')}",
                 fresh("synth1.sqlite", "run.sqlite"), "sqldiff --primarykey"),
        Scenario(f"{label} change import (1%), 1,000 curated rows held apart",
                 admin("import", "--db", path("run.sqlite"), path("snapshot2")),
                 f"sqldiff --primarykey {path('anchor1.sqlite')} {path('anchor2.sqlite')} > {path('sqldiff.sql')}",
                 fresh("synth1-curated.sqlite", "run.sqlite"), "sqldiff --primarykey"),
        # sqldiff only reads; the import also writes the master. This anchor writes too: sqlite3 runs
        # sqldiff's SQL into a copy of the first snapshot's keyed tables (WAL, as a master is), in one
        # transaction: the standard tools' floor for a change that lands in a database.
        Scenario(f"{label} change import (1%), against a diff that is written",
                 admin("import", "--db", path("run.sqlite"), path("snapshot2")),
                 f"sqldiff --primarykey {path('anchor1.sqlite')} {path('anchor2.sqlite')} > {path('sqldiff.sql')} && "
                 f"sqlite3 {path('anchor-applied.sqlite')} BEGIN '.read {path('sqldiff.sql')}' COMMIT",
                 lambda: (shutil.copy(path("synth1.sqlite"), path("run.sqlite")), shutil.copy(path("anchor1.sqlite"), path("anchor-applied.sqlite")),
                          run(["sqlite3", path("anchor-applied.sqlite"), "PRAGMA journal_mode = WAL"])),
                 "sqldiff --primarykey, then sqlite3 runs its SQL"),
        Scenario(f"{label} release (no verify)",
                 admin("release", "--db", path("synth2.sqlite"), "--out", path("run-release"), "--no-verify"),
                 release_pipeline(path("synth2.sqlite"), path("anchor-release"), path("releases/1/stations.sqlite"),
                                  path("releases/1/stations.sqlite")),
                 clean("run-release"), "sqlite3 build + gzip + sha256sum + sqldiff | gzip"),
        Scenario(f"{label} release (default: checks and verify)",
                 admin("release", "--db", path("synth2.sqlite"), "--out", path("run-release")),
                 verified_release_pipeline(path("synth2.sqlite"), path("anchor-release"), path("releases/1/stations.sqlite")),
                 lambda: (shutil.rmtree(path("run-release"), ignore_errors=True),
                          shutil.copytree(path("releases"), path("run-release"))),
                 "the same, then sqlite3 applies the delta, sqldiff, integrity_check, gunzip -t, sha256sum -c"),
        Scenario(f"{label} release (no verify), against VACUUM INTO alone",
                 admin("release", "--db", path("synth2.sqlite"), "--out", path("run-release"), "--no-verify"),
                 f"rm -f {path('vacuum.sqlite')} && sqlite3 {path('synth2.sqlite')} \"VACUUM INTO '{path('vacuum.sqlite')}'\"",
                 clean("run-release"), "sqlite3 VACUUM INTO"),
        Scenario(f"{label} release signed (no verify), against unsigned",
                 f"rm -rf {path('run-signed')} && " + admin("release", "--db", path("synth2.sqlite"), "--out", path("run-signed"),
                                                            "--no-verify", "--sign", path("signing-key")),
                 f"rm -rf {path('run-unsigned')} && " + admin("release", "--db", path("synth2.sqlite"), "--out", path("run-unsigned"),
                                                              "--no-verify"),
                 None, "the same release unsigned"),
        Scenario(f"{label} phone update v1 → v2 (station-phone, delta)",
                 f"cp {path('releases/1/stations.sqlite')} {path('phone.sqlite')} && rm -f {path('phone.sqlite')}.* && "
                 f"{PHONE} update --db {path('phone.sqlite')} --from {path('phone-release')} --allow-unsigned",
                 f"cp {path('releases/1/stations.sqlite')} {path('anchor-phone.sqlite')} && "
                 f"{{ echo 'BEGIN;'; gunzip -c {path('phone-release/2/delta-from-1.sql.gz')}; echo 'COMMIT;'; }} | sqlite3 -bail {path('anchor-phone.sqlite')}",
                 phone_release, "cp, then gunzip | sqlite3 in one transaction"),
        Scenario(f"{label} phone full update v1 → v2 (station-phone from serve, 100,000 app rows)",
                 f"{PHONE} update --db {path('phone-full.sqlite')} --from $(cat {path('served-url')}) --allow-unsigned --prefer-full",
                 full_update_anchor(), prepare_full_update,
                 "curl, gunzip, sqlite3 running the carry-over and copying the app's table, mv"),
        Scenario(f"{label} phone full update v1 → v2, against the tools keeping the file in place",
                 f"{PHONE} update --db {path('phone-full.sqlite')} --from $(cat {path('served-url')}) --allow-unsigned --prefer-full",
                 full_update_in_place_anchor(), prepare_full_update,
                 "the same, with sqlite3 .restore instead of mv"),
        Scenario(f"{label} phone full update v1 → v2, against the tools replacing the release tables in place",
                 f"{PHONE} update --db {path('phone-full.sqlite')} --from $(cat {path('served-url')}) --allow-unsigned --prefer-full",
                 full_update_replace_tables_anchor(), prepare_full_update,
                 "curl, gunzip, sqlite3 replacing each release table in one transaction, then the splits"),
        Scenario(f"{label} delta from v1, gzip",
                 admin("delta", "--db", path("synth2.sqlite"), "--from", "1", "--gzip", "--output", path("delta.sql.gz")),
                 f"sqldiff --primarykey {path('releases/1/stations.sqlite')} {path('run-release/2/stations.sqlite')} | gzip > {path('sqldiff.sql.gz')}",
                 released_version_2, "sqldiff --primarykey | gzip"),
    ]
    if with_long_lines:
        # The second shape (issue 75): many short lines, quoted names, long addresses, a uniform 1 %.
        scenarios += [
            Scenario(f"{label} long lines: initial import",
                     admin("import", "--db", path("run.sqlite"), path("long1")),
                     sqlite_import(path("anchor-run.sqlite"), path("long1"), keyed=True),
                     fresh("empty.sqlite", "run.sqlite"), "sqlite3 .import, keyed"),
            Scenario(f"{label} long lines: initial import, against the rows and a log row each",
                     admin("import", "--db", path("run.sqlite"), path("long1")),
                     sqlite_normalized_import(path("anchor-run.sqlite"), path("long1"), path("empty.sqlite"), log=True),
                     fresh("empty.sqlite", "run.sqlite"), "sqlite3 .import, then every row keyed and one updates row each, one transaction"),
            Scenario(f"{label} long lines: change import (1%)",
                     admin("import", "--db", path("run.sqlite"), path("long2")),
                     f"sqldiff --primarykey {path('anchor-long1.sqlite')} {path('anchor-long2.sqlite')} > {path('sqldiff.sql')}",
                     fresh("long1.sqlite", "run.sqlite"), "sqldiff --primarykey")
        ]
    if args.scenarios:
        wanted = args.scenarios.split(",")
        scenarios = [scenario for scenario in scenarios if any(word in scenario.name for word in wanted)]
    print(f"# {n:,} stations; median of {args.runs} runs after a warm-up, ours and the anchor alternated", flush=True)
    print("| scenario | ours (s) | anchor | anchor (s) | ratio | ratio per run | our peak memory (MiB) |")
    print("|---|---:|---|---:|---:|---:|---:|", flush=True)
    for scenario in scenarios:
        ours, anchor, peak, (low, high) = measure(scenario, args.runs)
        label = scenario.anchor_label.replace("|", "\\|")
        print(f"| {scenario.name} | {ours:.2f} | {label} | {anchor:.2f} | {ours / anchor:.2f} | {low:.2f}–{high:.2f} | {peak:.0f} |", flush=True)
    if "server" in served:
        served["server"].terminate()
    if args.scenarios:
        return
    ours_gz, anchor_gz = os.path.getsize(path("delta.sql.gz")), os.path.getsize(path("sqldiff.sql.gz"))
    print(f"\ndelta gzip bytes: ours {ours_gz:,}, sqldiff | gzip {anchor_gz:,} (ratio {ours_gz / anchor_gz:.2f})")
    if args.history:
        os.makedirs(path("history"))
        history_benchmark(args.history_stations, lengths, max(1, args.runs // 2))
    serve_benchmark(WORK, n, args.serve_seconds)
    web_rows()


if __name__ == "__main__":
    main()
