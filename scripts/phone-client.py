#!/usr/bin/env python3
"""A phone test client: plays a phone at every older data version against a release served over HTTP.

Usage: phone-client.py BASE_URL RELEASE_FOLDER SPLITS_JSON WORK_FOLDER [--static]
       phone-client.py update BASE_URL --db PHONE --trust KEY.pub [--trust KEY.pub] --dataset D
                       --state STATE.json [--now 2026-11-27T03:10:00Z]

The second form is one phone that checks signatures (docs/clients.md, "How a phone updates"): it reads
/manifest.json and /manifest.json.sig, and runs nothing unless a signature by a pinned key verifies over
the manifest's exact bytes, `dataset` is D, `sequence` is not below the highest in STATE, and `expires`
is after the later of its clock (--now) and the newest `published_at` in STATE. Then it downloads what
`downloads` lists for its version, checks size and SHA-256 before inflating or running it, updates, and
records the sequence and `published_at` in STATE. Prints `updated to N by delta|full`, `up to date`, or
`REFUSED: why` (exit 1, the database untouched).

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
import base64
import datetime
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


SIGNATURE_DOMAIN = b"station-admin manifest signature v1\n"


class Refused(Exception):
    pass


def option_values(name):
    return [sys.argv[i + 1] for i, a in enumerate(sys.argv[:-1]) if a == name]


def timestamp(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)


def checked_manifest(base, trusted, dataset, state, now):
    """The manifest's bytes and JSON once every check of a signed manifest passed; else Refused."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    status, _, manifest_bytes = get(f"{base}/manifest.json", accept_gzip=False)
    if status != 200:
        raise Refused(f"manifest.json: HTTP {status}")
    status, _, signature_bytes = get(f"{base}/manifest.json.sig", accept_gzip=False)
    if status != 200:
        raise Refused(f"manifest.json.sig: HTTP {status} (an unsigned folder)")
    try:
        signatures = json.loads(signature_bytes)
        assert signatures["format"] == 1
        entries = [(e["key_id"], e["manifest_sha256"], base64.b64decode(e["signature"], validate=True)) for e in signatures["signatures"]]
    except Exception:
        raise Refused("manifest.json.sig is truncated or garbled")
    digest = sha256(manifest_bytes)
    this = [e for e in entries if e[1] == digest]
    if not this:
        raise Refused("no signature of this manifest: it or its signature file was changed")
    candidates = [e for e in this if e[0] in trusted]
    if not candidates:
        raise Refused(f"no signature by a pinned key (signed by {sorted({e[0] for e in this})})")
    verified = False
    for key_id, _, signature in candidates:
        try:
            Ed25519PublicKey.from_public_bytes(trusted[key_id]).verify(signature, SIGNATURE_DOMAIN + manifest_bytes)
            verified = True
        except InvalidSignature:
            pass
    if not verified:
        raise Refused("the signature does not verify over this manifest: it or its signature was changed")
    manifest = json.loads(manifest_bytes)
    if manifest.get("dataset") != dataset:
        raise Refused(f"dataset {manifest.get('dataset')}, not {dataset}")
    if manifest["sequence"] < state.get("sequence", 0):
        raise Refused(f"sequence {manifest['sequence']} is below {state['sequence']}, already accepted (rollback)")
    floor = max([now] + ([timestamp(state["published_at"])] if "published_at" in state else []))
    if timestamp(manifest["expires"]) <= floor:
        raise Refused(f"expired at {manifest['expires']} (now {floor:%Y-%m-%dT%H:%M:%SZ})")
    return manifest


def update_one(arguments):
    base = arguments[0].rstrip("/")
    phone = option_values("--db")[0]
    trusted = {}
    for path in option_values("--trust"):
        algorithm, key_id, key = open(path).read().split()[:3]
        trusted[key_id] = base64.b64decode(key)
    dataset = option_values("--dataset")[0]
    state_path = option_values("--state")[0]
    state = json.load(open(state_path)) if os.path.exists(state_path) else {}
    now = timestamp(option_values("--now")[0]) if option_values("--now") else datetime.datetime.now(datetime.timezone.utc)
    try:
        manifest = checked_manifest(base, trusted, dataset, state, now)
        db = sqlite3.connect(phone)
        version = db.execute("PRAGMA user_version").fetchone()[0]
        db.close()
        if version >= manifest["newest"]:
            print("up to date")
        else:
            work = os.path.dirname(os.path.abspath(phone))
            path = update_from_manifest(base, work, phone, manifest, version)
            print(f"updated to {manifest['newest']} by {path}")
    except Refused as refusal:
        print(f"REFUSED: {refusal}")
        sys.exit(1)
    state = {"sequence": manifest["sequence"], "published_at": max(manifest["published_at"], state.get("published_at", ""))}
    with open(state_path + ".tmp", "w") as file:
        json.dump(state, file)
    os.replace(state_path + ".tmp", state_path)


def main():
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    if arguments and arguments[0] == "update":
        return update_one([a for i, a in enumerate(sys.argv[2:], 2) if not a.startswith("--") and not sys.argv[i - 1].startswith("--")])
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
