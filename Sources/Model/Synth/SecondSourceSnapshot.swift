import Foundation
import StationCSV
import StationSchema
import StationSupport

extension SnapshotSynthesizer {
    /// TrainLCD/StationAPI's headers (`SourceProfile.trainlcd`), as its `data/` files have them.
    package static let secondSourceHeaders: [MasterTable: (file: String, header: [String])] = [
        .companies: ("1!companies.csv", ["company_cd", "rr_cd", "company_name", "company_name_k", "company_name_h", "company_name_r",
                                         "company_name_en", "company_name_full_en", "company_url", "company_type", "e_status", "e_sort"]),
        .lines: ("2!lines.csv", ["line_cd", "company_cd", "line_name", "line_name_k", "line_name_h", "line_name_r", "line_name_rn",
                                 "line_name_zh", "line_name_ko", "line_color_c", "line_type"]
                    + (1...4).map { "line_symbol\($0)" } + (1...4).map { "line_symbol\($0)_color" } + (1...4).map { "line_symbol\($0)_shape" }
                    + ["e_status", "e_sort", "average_distance"]),
        .stations: ("3!stations.csv", ["station_cd", "station_g_cd", "station_name", "station_name_k", "station_name_r", "station_name_rn",
                                       "station_name_zh", "station_name_ko"] + (1...4).map { "station_number\($0)" }
                    + ["three_letter_code", "line_cd", "pref_cd", "post", "address", "lon", "lat", "open_ymd", "close_ymd", "e_status", "e_sort"]),
        .connections: ("8!connections.csv", ["id", "station_cd1", "station_cd2", "distance"]),
    ]

    /// Writes what a second source shaped as TrainLCD publishes (`SourceProfile.trainlcd`) says of
    /// the snapshot in `base`, for `import --source trainlcd` at any size: every company, line and
    /// station of it with readings and romaji where `base` has none, names in other scripts,
    /// station numbers, colours with `#`; one station in 200 that `base` lacks, after a station of
    /// its line and paired with it; one station in 1,000 whose `e_sort` differs from base's (a
    /// `source-disagrees` finding each); the connections as station pairs without their line.
    /// The same `base` and `seed` give the same bytes.
    @discardableResult
    public static func secondSource(of base: String, seed: UInt64, into folder: String) throws -> SynthSummary {
        try prepareEmptyFolder(folder)
        let files = try ImportSource.files(from: [base], .shipped)
        var writer = SecondSourceWriter(seed: seed, nextStation: try largestStationCode(in: files) + 1)
        for table in [MasterTable.companies, .lines, .stations, .connections] {
            guard let file = files.first(where: { $0.table == table }), let (name, header) = secondSourceHeaders[table] else { continue }
            let output = try CSVFileWriter(path: (folder as NSString).appendingPathComponent(name))
            try output.write(header)
            let columns = file.header.columns.map(\.name)
            var isHeader = true
            try CSVReader(path: file.path, displayName: file.path).forEachRecord { record in
                if isHeader { isHeader = false; return }
                var row: [String: String] = [:]
                for (index, column) in columns.enumerated() where index < record.fields.count {
                    guard let text = String(validating: record.fields[index], as: UTF8.self) else { throw SynthError.notUTF8(file.path, line: record.line) }
                    row[column] = text
                }
                for published in writer.rows(of: table, from: row) { try output.write(header.map { published[$0] ?? "" }) }
            }
            if table == .connections {
                for pair in writer.addedPairs { try output.write(header.map { pair[$0] ?? "" }) }
            }
            try output.finish()
            writer.summary.rows[name] = writer.written[table, default: 0]
        }
        return writer.summary
    }
}

/// The second source's rows, one base row at a time: which rows differ or are added depends only
/// on the seed and their key.
private struct SecondSourceWriter {
    let seed: UInt64
    var nextStation: Int64
    var summary = SynthSummary(rows: [:], changes: [:])
    var written: [MasterTable: Int] = [:]
    var addedPairs: [[String: String]] = []

    init(seed: UInt64, nextStation: Int64) {
        self.seed = seed
        self.nextStation = nextStation
    }

    private func chosen(_ key: Int64, _ salt: UInt64, oneIn: UInt64) -> Bool { SplitMix64.hash(seed &+ salt, key) % oneIn == 0 }

    /// The published rows for one base row: itself, and for a station sometimes one the base lacks.
    mutating func rows(of table: MasterTable, from base: [String: String]) -> [[String: String]] {
        var row = base
        let key = Int64(base[table.keyColumns[0]] ?? "") ?? 0
        var published: [[String: String]]
        switch table {
        case .companies:
            let reading = SecondSourceNames(key: key, seed: seed)
            row["company_name_k"] = row["company_name_k"].nonEmpty ?? reading.kana
            row["company_name_r"] = row["company_name_r"].nonEmpty ?? reading.romaji
            row["company_name_en"] = reading.plain + " Railway"
            row["company_name_full_en"] = reading.plain + " Railway Company"
            published = [row]
        case .lines:
            let reading = SecondSourceNames(key: key, seed: seed)
            row["line_name_k"] = row["line_name_k"].nonEmpty ?? reading.kana + "セン"
            row["line_name_r"] = reading.romaji + " Line"
            row["line_name_rn"] = reading.plain + " Line"
            let colour = row["line_color_c"].nonEmpty ?? String(format: "%06X", Int(SplitMix64.hash(seed &+ 11, key) % 0x1000000))
            row["line_color_c"] = "#" + colour
            row["line_symbol1"] = String(reading.plain.prefix(2)).uppercased()
            row["line_symbol1_color"] = "#" + colour
            row["line_symbol1_shape"] = "ROUND"
            row["average_distance"] = "0"
            published = [row]
        case .stations:
            published = [station(row, key: key, mayDiffer: true)]
            if chosen(key, 21, oneIn: 200) {
                var added = station(row, key: nextStation, mayDiffer: false)
                added["station_cd"] = String(nextStation)
                added["station_g_cd"] = String(nextStation)
                added["station_name"] = (row["station_name"] ?? "") + "新"
                added["e_sort"] = String(nextStation)
                addedPairs.append(["station_cd1": base["station_cd"] ?? "", "station_cd2": String(nextStation)])
                summary.changes["station the base lacks", default: 0] += 1
                nextStation += 1
                published.append(added)
            }
        case .connections:
            published = [["station_cd1": base["station_cd1"] ?? "", "station_cd2": base["station_cd2"] ?? "", "distance": "0"]]
        default:
            published = []
        }
        written[table, default: 0] += published.count
        return published
    }

    private mutating func station(_ base: [String: String], key: Int64, mayDiffer: Bool) -> [String: String] {
        var row = base
        let reading = SecondSourceNames(key: key, seed: seed)
        row["station_name_k"] = row["station_name_k"].nonEmpty ?? reading.kana
        row["station_name_r"] = row["station_name_r"].nonEmpty ?? reading.romaji
        row["station_name_rn"] = reading.plain
        row["station_name_zh"] = base["station_name"]
        row["station_name_ko"] = reading.hangul
        row["station_number1"] = SynthVocabulary.padded(Int(key % 100), 2)
        if mayDiffer, chosen(key, 23, oneIn: 1_000), let sort = Int64(base["e_sort"] ?? "") {
            row["e_sort"] = String(sort + 1)
            summary.changes["value that differs", default: 0] += 1
        }
        return row
    }
}

/// A reading made from a key: katakana, Hepburn romaji with macrons, plain romaji, hangul.
private struct SecondSourceNames {
    let kana: String, romaji: String, plain: String, hangul: String

    private static let syllables: [(kana: String, romaji: String, plain: String, hangul: String)] = [
        ("カ", "ka", "ka", "카"), ("キ", "ki", "ki", "키"), ("サ", "sa", "sa", "사"), ("シ", "shi", "shi", "시"), ("タ", "ta", "ta", "타"),
        ("ナ", "na", "na", "나"), ("ハ", "ha", "ha", "하"), ("マ", "ma", "ma", "마"), ("ヤ", "ya", "ya", "야"), ("ラ", "ra", "ra", "라"),
        ("トウ", "tō", "to", "토"), ("キョウ", "kyō", "kyo", "쿄"), ("オオ", "ō", "o", "오"), ("ワ", "wa", "wa", "와"), ("ノ", "no", "no", "노"),
    ]

    init(key: Int64, seed: UInt64) {
        var random = SplitMix64(seed: SplitMix64.hash(seed, key))
        let parts = (0..<(2 + random.below(3))).map { _ in Self.syllables[random.below(Self.syllables.count)] }
        kana = parts.map(\.kana).joined()
        func capitalized(_ text: String) -> String { text.prefix(1).uppercased() + text.dropFirst() }
        romaji = capitalized(parts.map(\.romaji).joined())
        plain = capitalized(parts.map(\.plain).joined())
        hangul = parts.map(\.hangul).joined()
    }
}

private extension Optional where Wrapped == String {
    /// The text, or nil where it is missing or empty.
    var nonEmpty: String? { self.flatMap { $0.isEmpty ? nil : $0 } }
}
