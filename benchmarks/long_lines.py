#!/usr/bin/env python3
"""A second synthetic shape, made apart from `station-admin synth` (issue 75): ekidata's five
files with many short lines (40,000 lines of 25 stations, each 0.5–2 km from the one before),
names that need CSV quoting (commas and double quotes), long addresses; and a next snapshot that
changes 1 % of the stations spread uniformly over the file (half renamed, a third moved, a fifth
closed) and appends 2,000 new stations to one line.

Usage: benchmarks/long_lines.py BASE_FOLDER NEXT_FOLDER PREF_CSV [--lines N] [--per-line N] [--seed S]
"""
import argparse
import csv
import math
import os
import random
import shutil

STATION_HEADER = ["station_cd", "station_g_cd", "station_name", "station_name_k", "station_name_r", "line_cd", "pref_cd",
                  "post", "address", "lon", "lat", "open_ymd", "close_ymd", "e_status", "e_sort"]
LINE_HEADER = ["line_cd", "company_cd", "line_name", "line_name_k", "line_name_h", "line_color_c", "line_color_t",
               "line_type", "lon", "lat", "zoom", "e_status", "e_sort"]
COMPANY_HEADER = ["company_cd", "rr_cd", "company_name", "company_name_k", "company_name_h", "company_name_r",
                  "company_url", "company_type", "e_status", "e_sort"]
SYLLABLES = "あかさたなはまやらわいきしちにひみりうくすつぬふむゆるえけせてねへめれおこそとのほもよろ"
KANJI = "山川田中本町橋原野沢井森谷島岡崎新東西南北上下大小高宮前坂台城"


def name(rng, suffix=""):
    """A name of 2–4 characters; one in five needs quoting (a comma or double quotes in it)."""
    text = "".join(rng.choice(KANJI) for _ in range(rng.randint(2, 4))) + suffix
    roll = rng.random()
    if roll < 0.1:
        text += "," + rng.choice(KANJI) + "口"
    elif roll < 0.2:
        text = '"' + text + '"前'
    return text


def address(rng, pref):
    """About 60 characters: a prefecture, a city, a district, a block and a building's name."""
    parts = [pref, "".join(rng.choice(KANJI) for _ in range(3)) + "市", "".join(rng.choice(KANJI) for _ in range(3)) + "町",
             f"{rng.randint(1, 9)}丁目{rng.randint(1, 40)}番{rng.randint(1, 30)}号",
             "".join(rng.choice(SYLLABLES) for _ in range(12)) + "ビル" + str(rng.randint(1, 20)) + "階",
             "（" + "".join(rng.choice(KANJI) for _ in range(8)) + "駅前広場北側）"]
    return "".join(parts)


def step(lat, lon, bearing, kilometres):
    lat2 = lat + kilometres / 111.0 * math.cos(bearing)
    lon2 = lon + kilometres / (111.0 * math.cos(math.radians(lat))) * math.sin(bearing)
    return lat2, lon2


def write(folder, stations, lines, companies, joins, pref_csv):
    os.makedirs(folder, exist_ok=True)
    shutil.copy(pref_csv, os.path.join(folder, "pref.csv"))
    for file, header, rows in [("company.csv", COMPANY_HEADER, companies), ("line.csv", LINE_HEADER, lines),
                               ("station.csv", STATION_HEADER, stations), ("join.csv", ["line_cd", "station_cd1", "station_cd2"], joins)]:
        with open(os.path.join(folder, file), "w", encoding="utf-8", newline="") as f:
            out = csv.writer(f, lineterminator="\n")
            out.writerow(header)
            out.writerows(rows)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("next")
    parser.add_argument("pref_csv")
    parser.add_argument("--lines", type=int, default=40_000)
    parser.add_argument("--per-line", type=int, default=25)
    parser.add_argument("--seed", type=int, default=75)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with open(args.pref_csv, encoding="utf-8") as f:
        prefs = [row for row in csv.reader(f)][1:]
    prefs = [(int(code), pref_name) for code, pref_name in prefs if 1 <= int(code) <= 47]
    companies, lines, stations, joins = [], [], [], []
    company_count = max(1, args.lines // 25)
    for c in range(1, company_count + 1):
        company = name(rng, "鉄道")
        companies.append([c, 99, company, "", company + "株式会社", company, "", 1 + c % 3, 0, c])
    code = 1_000_000
    for index in range(args.lines):
        line_cd = 10_000 + index
        lat, lon = rng.uniform(31.5, 43.5), rng.uniform(130.5, 144.5)
        bearing = rng.uniform(0, 2 * math.pi)
        first = None
        for position in range(args.per_line):
            if position:
                bearing += rng.uniform(-0.4, 0.4)
                lat, lon = step(lat, lon, bearing, rng.uniform(0.5, 2.0))
            pref_cd, pref_name = prefs[(index * 7 + position // 10) % len(prefs)]
            stations.append([code, code, name(rng), "", "", line_cd, pref_cd, f"{rng.randint(100, 999)}-{rng.randint(0, 9999):04d}",
                             address(rng, pref_name), f"{lon:.6f}", f"{lat:.6f}",
                             f"{rng.randint(1872, 2020)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}", "0000-00-00", 0, code])
            if position:
                joins.append([line_cd, code - 1, code])
            else:
                first = (lon, lat)
            code += 1
        lines.append([line_cd, 1 + index % company_count, name(rng, "線"), "", "", "", "", "", f"{first[0]:.6f}", f"{first[1]:.6f}",
                      10, 0, line_cd])
    write(args.base, stations, lines, companies, joins, args.pref_csv)

    # The next snapshot: 1 % of the stations, drawn uniformly, half renamed, a third moved, a
    # fifth closed; then 2,000 stations appended to one line.
    changed = rng.sample(range(len(stations)), len(stations) // 100)
    renamed, moved, closed = changed[:len(changed) // 2], changed[len(changed) // 2:len(changed) * 5 // 6], changed[len(changed) * 4 // 5:]
    following = [list(row) for row in stations]
    for index in renamed:
        following[index][2] = name(rng, "新")
    for index in moved:
        row = following[index]
        lat, lon = step(float(row[10]), float(row[9]), rng.uniform(0, 2 * math.pi), rng.uniform(0.05, 0.3))
        row[9], row[10] = f"{lon:.6f}", f"{lat:.6f}"
    for index in closed:
        following[index][12] = f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        following[index][13] = 2
    extended = 10_000 + rng.randrange(args.lines)
    last = next(row for row in reversed(following) if row[5] == extended)
    lat, lon, before = float(last[10]), float(last[9]), last[0]
    following_joins = list(joins)
    new_code = 2_000_000
    for _ in range(2_000):
        # A random walk, not a straight run: 2,000 steps of a straight line would leave Japan.
        bearing = rng.uniform(0, 2 * math.pi)
        lat, lon = step(lat, lon, bearing, rng.uniform(0.5, 2.0))
        pref_cd, pref_name = prefs[0]
        following.append([new_code, new_code, name(rng), "", "", extended, pref_cd, "100-0001", address(rng, pref_name),
                          f"{lon:.6f}", f"{lat:.6f}", "2025-04-01", "0000-00-00", 0, new_code])
        following_joins.append([extended, before, new_code])
        before = new_code
        new_code += 1
    write(args.next, following, lines, companies, following_joins, args.pref_csv)
    print(f"long lines: {len(stations):,} stations on {len(lines):,} lines; next: {len(renamed):,} renamed, {len(moved):,} moved, "
          f"{len(closed):,} closed, 2,000 added to line {extended}")


if __name__ == "__main__":
    main()
