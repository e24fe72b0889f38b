#!/usr/bin/env python3
"""A phone test client: plays a phone at every older data version against a release served over HTTP.

Usage: phone-client.py BASE_URL RELEASE_FOLDER SPLITS_JSON WORK_FOLDER [--static]

For every version v from 1 to the newest N - 1 that the release folder holds a database of, a phone
starts from that database with synthetic user records (on a sample of stations, on every station split
after v, and on some split's new code already), then brings itself to N as an app would:

- with `serve` (default): it asks GET /update?from=v. A delta (200) is checked against the manifest's
  SHA-256 (of the gzip when the server sent it gzip-encoded, else of the SQL) and run in one
  transaction; a redirect (303) is followed: the database's gzip is downloaded, its SHA-256 checked,
  inflated and checked again, and the carry-over script (X-Carry-Over) downloaded, checked and run with
  the working database as main and the new one attached as `incoming`, in one transaction;
- with --static (nginx, a CDN): it reads /manifest.json and downloads what `downloads` lists for v.

Each phone must end identical to a fresh database of version N: the same rows in every master table,
user_version N, and exactly the user records the splits after v give (each record kept, each split in
order copying the old station's record where the user has none). Prints one line per phone and a
closing line `N passed, N failed`; exits 1 if any failed.
"""
import gzip
import hashlib
import json
import os
import shutil
import sqlite3
import sys
import urllib.error
import urllib.request

MASTER_TABLES = ["prefectures", "companies", "lines", "stations", "connections"]


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def get(url, accept_gzip=True):
    request = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"} if accept_gzip else {})
    try:
        with OPENER.open(request, timeout=60) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def synthetic_records(db, splits_after):
    """The records a phone holds before updating: as the release verifier puts them."""
    stations = [row[0] for row in db.execute("SELECT station_cd FROM stations WHERE station_cd % 7 = 0 OR rowid % 5 = 0")]
    records = {}
    for index, station in enumerate(stations):
        records[station] = (None if index % 3 == 0 else f"2019-0{index % 9 + 1}-1{index % 10}", f"sample {index}", index)
    chained = {s["new"] for s in splits_after} & {s["old"] for s in splits_after}
    for index, split in enumerate(splits_after):
        if split["old"] in chained:
            records.pop(split["old"], None)
        else:
            records[split["old"]] = (f"2010-12-0{index % 9 + 1}", f"visited {split['old']} — it's \"old\"\n🚃", 1000 + index)
        if index % 2 == 1 and split["old"] not in chained and split["new"] not in chained:
            records[split["new"]] = ("2024-03-16", f"already at {split['new']}", 2000 + index)
    db.executemany("INSERT OR REPLACE INTO completions (station_cd, date, memo, updated_at) VALUES (?, ?, ?, ?)",
                   [(station, *record) for station, record in records.items()])
    db.commit()
    return records


def expected_records(before, splits_after):
    records = dict(before)
    for split in splits_after:
        if split["new"] not in records and split["old"] in records:
            records[split["new"]] = records[split["old"]]
    return records


def records_of(path):
    db = sqlite3.connect(path)
    try:
        return {row[0]: tuple(row[1:]) for row in db.execute("SELECT station_cd, date, memo, updated_at FROM completions")}
    finally:
        db.close()


def content_of(path):
    db = sqlite3.connect(path)
    try:
        content = {table: sorted(db.execute(f"SELECT * FROM {table}").fetchall(), key=repr) for table in MASTER_TABLES}
        return db.execute("PRAGMA user_version").fetchone()[0], content
    finally:
        db.close()


def run_in_transaction(path, script, attach=None):
    db = sqlite3.connect(path, isolation_level=None)
    try:
        if attach:
            db.execute("ATTACH DATABASE ? AS incoming", (attach,))
        try:
            db.executescript("BEGIN;\n" + script + "\nCOMMIT;")
        except sqlite3.Error:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
    finally:
        db.close()


def fetch_checked(base, path, expected_sha, what):
    status, _, body = get(f"{base}/{path}", accept_gzip=False)
    if status != 200:
        raise RuntimeError(f"{what} {path}: HTTP {status}")
    if sha256(body) != expected_sha:
        raise RuntimeError(f"{what} {path}: sha256 {sha256(body)}, the manifest says {expected_sha}")
    return body


def full_download(base, work, phone, released, carry_over_path, v):
    database = released["database_gzip"]
    body = fetch_checked(base, database["path"], database["sha256"], "database")
    fresh = os.path.join(work, f"fresh-{v}.sqlite")
    with open(fresh, "wb") as file:
        file.write(gzip.decompress(body))
    with open(fresh, "rb") as file:
        if sha256(file.read()) != released["database"]["sha256"]:
            raise RuntimeError("the inflated database is not the manifest's")
    carry = released["carry_over"]
    if carry_over_path != carry["path"]:
        raise RuntimeError(f"carry-over {carry_over_path}, the manifest says {carry['path']}")
    script = fetch_checked(base, carry["path"], carry["sha256"], "carry-over").decode("utf-8")
    run_in_transaction(phone, script, attach=fresh)
    # Set the old file aside and use the new one, as the app does.
    os.replace(fresh, phone)


def update_through_serve(base, work, phone, manifest, v):
    newest = manifest["newest"]
    released = next(r for r in manifest["versions"] if r["version"] == newest)
    status, headers, body = get(f"{base}/update?from={v}")
    if status == 200:
        delta = next(d for d in released["deltas"] if d["from"] == v)
        if headers.get("Content-Encoding") == "gzip":
            if sha256(body) != delta["file"]["sha256"]:
                raise RuntimeError("the delta's gzip is not the manifest's")
            body = gzip.decompress(body)
        # A joined delta (manifest format 5) lists its SQL's parts, one after the other.
        parts = delta.get("sql_parts") or [{"sql_bytes": delta["sql_bytes"], "sql_sha256": delta["sql_sha256"]}]
        offset = 0
        for part in parts:
            if sha256(body[offset:offset + part["sql_bytes"]]) != part["sql_sha256"]:
                raise RuntimeError("the delta's SQL is not the manifest's")
            offset += part["sql_bytes"]
        if offset != len(body) or len(body) != delta["sql_bytes"]:
            raise RuntimeError("the delta's SQL is not as long as the manifest says")
        if int(headers["X-Data-Version"]) != newest:
            raise RuntimeError("X-Data-Version is not the manifest's newest")
        run_in_transaction(phone, body.decode("utf-8"))
        return "delta"
    if status == 303:
        location = headers["Location"].lstrip("/")
        if location != released["database_gzip"]["path"]:
            raise RuntimeError(f"redirected to {location}")
        full_download(base, work, phone, released, headers["X-Carry-Over"].lstrip("/"), v)
        return "full"
    raise RuntimeError(f"/update?from={v}: HTTP {status} {body[:200]!r}")


def update_from_manifest(base, work, phone, manifest, v):
    newest = manifest["newest"]
    released = next(r for r in manifest["versions"] if r["version"] == newest)
    download = next((d for d in released["downloads"] if d["from"] == v), None)
    if download and download["kind"] == "delta":
        delta = next(d for d in released["deltas"] if d["from"] == v)
        body = fetch_checked(base, download["path"], delta["file"]["sha256"], "delta")
        run_in_transaction(phone, gzip.decompress(body).decode("utf-8"))
        return "delta"
    full_download(base, work, phone, released, download["carry_over"] if download else released["carry_over"]["path"], v)
    return "full"


def main():
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    static = "--static" in sys.argv
    base, folder, splits_path, work = arguments
    base = base.rstrip("/")
    with open(splits_path) as file:
        splits = json.load(file)
    status, _, body = get(f"{base}/manifest.json", accept_gzip=False)
    if status != 200:
        print(f"manifest.json: HTTP {status}")
        sys.exit(1)
    manifest = json.loads(body)
    newest = manifest["newest"]
    reference = os.path.join(folder, f"{newest}/stations.sqlite")
    reference_content = content_of(reference)
    passed = failed = 0
    for released in manifest["versions"]:
        v = released["version"]
        if v == 0 or v >= newest:
            continue
        phone = os.path.join(work, f"phone-{v}.sqlite")
        shutil.copyfile(os.path.join(folder, released["database"]["path"]), phone)
        splits_after = [s for s in splits if v < s["version"] <= newest]
        db = sqlite3.connect(phone)
        before = synthetic_records(db, splits_after)
        db.close()
        try:
            path = (update_from_manifest if static else update_through_serve)(base, work, phone, manifest, v)
            problems = []
            if content_of(phone) != reference_content:
                problems.append("master content or user_version differs from the newest database")
            got, expected = records_of(phone), expected_records(before, splits_after)
            differing = sorted(s for s in set(got) | set(expected) if got.get(s) != expected.get(s))
            if differing:
                problems.append(f"user records differ on stations {differing[:10]}")
        except Exception as error:  # a failure of any kind is this phone's
            path, problems = "?", [str(error)]
        if problems:
            failed += 1
            print(f"FAIL phone at version {v} ({path}): {'; '.join(problems)}")
        else:
            passed += 1
            print(f"ok   phone at version {v} reached version {newest} by {path}: {len(before)} records, {len(splits_after)} splits")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
