#!/usr/bin/env python3
"""Derives, independently of StationAdmin's code, the per-table and per-type counts
of `updates` rows that importing snapshot NEW over snapshot OLD must produce.

Usage: expected_counts.py OLD_DIR NEW_DIR   (prints JSON: {table: {type: count}})

It re-implements the diff rules of the core issue with Python's csv module:
trimmed fields, empty and 0000-00-00 are NULL, `add` means `address`, integers
compared as integers, coordinates equal within 1e-6, e_status 2 means closed.
"""
import csv, glob, json, os, sys

TABLES = {
    # table: (key columns, closes by status, coordinate columns)
    "prefectures": (["pref_cd"], False, []),
    "companies": (["company_cd"], True, []),
    "lines": (["line_cd"], True, ["lon", "lat"]),
    "stations": (["station_cd"], True, ["lon", "lat"]),
    "connections": (["line_cd", "station_cd1", "station_cd2"], False, []),
}
INTEGER_SUFFIXES = ("_cd", "_cd1", "_cd2", "e_status", "e_sort", "company_type", "line_type", "zoom")


def table_of(header):
    if "station_cd1" in header: return "connections"
    if "station_cd" in header: return "stations"
    if "line_cd" in header: return "lines"
    if "company_cd" in header: return "companies"
    if "pref_name" in header: return "prefectures"
    raise SystemExit("unknown header %r" % header)


def normalise(column, value):
    value = value.strip(" \t")
    if value == "" or value == "0000-00-00":
        return None
    if column.endswith(INTEGER_SUFFIXES):
        return int(value)
    if column in ("lon", "lat"):
        return float(value)
    return value


def load(folder):
    tables = {}
    for path in glob.glob(os.path.join(folder, "*.csv")):
        with open(path, encoding="utf-8-sig", newline="") as f:
            rows = list(csv.reader(f))
        header = ["address" if h == "add" else h for h in rows[0]]
        name = table_of(header)
        keys = TABLES[name][0]
        table = {}
        for row in rows[1:]:
            record = {c: normalise(c, v) for c, v in zip(header, row)}
            table[tuple(record[k] for k in keys)] = record
        tables[name] = table
    return tables


def differs(column, a, b, coordinates):
    if column in coordinates and a is not None and b is not None:
        return abs(a - b) >= 1e-6
    return a != b


def main(old_dir, new_dir):
    old, new = load(old_dir), load(new_dir)
    counts = {}
    for name, (keys, closes, coordinates) in TABLES.items():
        if name not in new:
            continue
        before, after = old.get(name, {}), new[name]
        count = {"INSERT": 0, "UPDATE": 0, "DELETE": 0, "RESTORE": 0}
        for key, row in after.items():
            if key not in before:
                count["INSERT"] += 1
                continue
            previous = before[key]
            if not any(differs(c, row[c], previous[c], coordinates) for c in row if c not in keys):
                continue
            if closes and previous["e_status"] != 2 and row["e_status"] == 2:
                count["DELETE"] += 1
            elif closes and previous["e_status"] == 2 and row["e_status"] != 2:
                count["RESTORE"] += 1
            else:
                count["UPDATE"] += 1
        for key, previous in before.items():
            if key not in after and (not closes or previous["e_status"] != 2):
                count["DELETE"] += 1
        counts[name] = count
    print(json.dumps(counts, sort_keys=True))


if __name__ == "__main__":
    main(*sys.argv[1:3])
