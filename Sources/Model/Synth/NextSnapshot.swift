import Foundation
import StationCSV
import StationSchema
import StationSupport

extension SnapshotSynthesizer {
    /// Writes a "next snapshot" of the snapshot in `base`: about `percent`% of its stations
    /// changed (renames, moves, new addresses, closures, restorations, a move to another line),
    /// new stations joined to their line, a share of the lines transferred to another company,
    /// and a few connections gone. Which rows change depends only on `seed` and their key.
    @discardableResult
    public static func next(of base: String, changePercent percent: Double, seed: UInt64, into folder: String) throws -> SynthSummary {
        try prepareEmptyFolder(folder)
        let files = try ImportSource.files(from: [base], .shipped)
        // New stations count up from the largest code of the base, so that chained next
        // snapshots never reuse a code (an offset from the old code did, two generations on).
        var changes = NextSnapshotChanges(seed: seed, threshold: UInt64(percent * 100), nextNewStation: try largestStationCode(in: files) + 1)
        for file in files {
            let name = (file.path as NSString).lastPathComponent
            let writer = try CSVFileWriter(path: (folder as NSString).appendingPathComponent(name))
            let columns = file.header.columns.map(\.name)
            var isHeader = true
            var rows = 0
            try CSVReader(path: file.path, displayName: file.path).forEachRecord { record in
                var fields = try record.fields.map { bytes -> String in
                    guard let text = String(validating: bytes, as: UTF8.self) else {
                        throw SynthError.notUTF8(file.path, line: record.line)
                    }
                    return text
                }
                if isHeader {
                    isHeader = false
                    return try writer.write(fields)
                }
                rows += 1
                if try changes.change(&fields, of: file.table, columns: columns, writingAddedTo: writer) { try writer.write(fields) }
            }
            if file.table == .connections {
                for connection in changes.newConnections { try writer.write(connection) }
            }
            try writer.finish()
            changes.summary.rows[name] = rows
        }
        return changes.summary
    }

    fileprivate static func change(_ fields: inout [String], _ index: (String) -> Int, kind: UInt64, lines: [String],
                               random: inout SplitMix64, summary: inout SynthSummary) {
        switch kind {
        case 0..<35:
            fields[index("station_name")] = SynthVocabulary.name(&random)
            summary.changes["station renamed", default: 0] += 1
        case 35..<60:
            if let latitude = Double(fields[index("lat")]) {
                fields[index("lat")] = SynthVocabulary.degrees(latitude + 0.001 + random.unit() * 0.004)
                summary.changes["station moved", default: 0] += 1
            }
        case 60..<75:
            if fields[index("e_status")] == String(MasterTable.closedStatus) {
                fields[index("e_status")] = "0"
                fields[index("close_ymd")] = "0000-00-00"
                summary.changes["station restored", default: 0] += 1
            } else {
                fields[index("e_status")] = String(MasterTable.closedStatus)
                // Never before its opening: a station added by an earlier generation opened on
                // 2024-03-16, and a release refuses dates out of order.
                fields[index("close_ymd")] = max("2024-03-15", fields[index("open_ymd")])
                summary.changes["station closed", default: 0] += 1
            }
        case 75..<90:
            fields[index("address")] = SynthVocabulary.prefectures[random.below(47)] + SynthVocabulary.name(&random) + "市"
            summary.changes["address changed", default: 0] += 1
        default:
            if !lines.isEmpty {
                fields[index("line_cd")] = lines[random.below(lines.count)]
                summary.changes["station moved to another line", default: 0] += 1
            }
        }
    }

    static func largestStationCode(in files: [ImportFile]) throws -> Int64 {
        guard let stations = files.first(where: { $0.table == .stations }) else { return 0 }
        let column = stations.header.columns.firstIndex { $0.name == "station_cd" }!
        var largest: Int64 = 0, isHeader = true
        try CSVReader(path: stations.path, displayName: stations.path).forEachRecord { record in
            if isHeader { isHeader = false; return }
            if let code = Int64(String(decoding: record.field(column), as: UTF8.self)) { largest = max(largest, code) }
        }
        return largest
    }
}

/// The changes a next snapshot makes, row by row: which rows change depends only on the seed and
/// their key; the random draws (a new name, a company) come in the rows' order.
private struct NextSnapshotChanges {
    let seed: UInt64
    /// Out of 10,000: the share of stations changed.
    let threshold: UInt64
    var nextNewStation: Int64
    var summary = SynthSummary(rows: [:], changes: [:])
    var random: SplitMix64
    var companies: [String] = []
    var lines: [String] = []
    var newConnections: [[String]] = []

    init(seed: UInt64, threshold: UInt64, nextNewStation: Int64) {
        self.seed = seed
        self.threshold = threshold
        self.nextNewStation = nextNewStation
        random = SplitMix64(seed: seed)
    }

    private func chosen(_ key: Int64, _ salt: UInt64, share: UInt64) -> Bool {
        SplitMix64.hash(seed &+ salt, key) % 10_000 < share
    }

    /// Changes one row of `table` in place (a station added beside it is written to `writer`);
    /// false where the row is dropped.
    mutating func change(_ fields: inout [String], of table: MasterTable, columns: [String], writingAddedTo writer: CSVFileWriter) throws -> Bool {
        func index(_ column: String) -> Int { columns.firstIndex(of: column)! }
        switch table {
        case .companies:
            companies.append(fields[index("company_cd")])
        case .lines:
            let code = fields[index("line_cd")]
            lines.append(code)
            if !companies.isEmpty, chosen(Int64(code) ?? 0, 1, share: threshold / 2) {
                fields[index("company_cd")] = companies[random.below(companies.count)]
                summary.changes["line transferred", default: 0] += 1
            }
        case .stations:
            let code = Int64(fields[index("station_cd")]) ?? 0
            let line = fields[index("line_cd")]
            if chosen(code, 2, share: threshold) {
                SnapshotSynthesizer.change(&fields, index, kind: SplitMix64.hash(seed &+ 3, code) % 100, lines: lines, random: &random, summary: &summary)
            }
            if chosen(code, 4, share: threshold / 10) {
                let added = addStation(beside: fields, index)
                try writer.write(added)
                // Joined on the line the station had in the base.
                newConnections.append([line, fields[index("station_cd")], added[index("station_cd")]])
            }
        case .connections:
            let key = (Int64(fields[1]) ?? 0) &* 31 &+ (Int64(fields[2]) ?? 0)
            if chosen(key, 5, share: threshold / 10) {
                summary.changes["connection removed", default: 0] += 1
                return false
            }
        default:
            break
        }
        return true
    }

    /// A new station, opened next to `station`.
    private mutating func addStation(beside station: [String], _ index: (String) -> Int) -> [String] {
        var added = station
        added[index("station_cd")] = String(nextNewStation)
        nextNewStation += 1
        added[index("station_g_cd")] = added[index("station_cd")]
        added[index("station_name")] = SynthVocabulary.name(&random) + "新駅"
        added[index("e_status")] = "0"
        added[index("close_ymd")] = "0000-00-00"
        added[index("open_ymd")] = "2024-03-16"
        summary.changes["station added", default: 0] += 1
        return added
    }
}
