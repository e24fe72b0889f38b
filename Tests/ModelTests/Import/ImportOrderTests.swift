import Foundation
import GRDB
import StationCheck
import StationDelta
import StationImport
import StationRelease
import StationReview
import StationSchema
import StationSupport
import StationSynth
import Testing

/// An import walks the master in key order beside a file in key order, and looks up the
/// rows that are out of place. What it commits must not depend on the order of the rows.
@Suite struct ImportOrderTests {
    let scratch = Scratch()

    /// The master's tables after importing `first` and then `second`, and the second import's changes.
    func outcome(_ name: String, first: String, second: String) throws -> (changes: [String], tables: [String: [String]]) {
        let database = try MasterDatabase.create(at: scratch.path("\(name).sqlite"))
        try Importer(database).importSnapshot([first])
        let report = try Importer(database).importSnapshot([second], options: ImportOptions(allowMassClose: true, describeLimit: nil))
        var tables: [String: [String]] = [:]
        for table in MasterTable.all {
            tables[table.name] = try database.read { db in
                try String.fetchAll(db, sql: """
                    SELECT \(table.columnNames.map { "quote(\($0))" }.joined(separator: " || ',' || ")) FROM \(table.name) ORDER BY \(table.keyOrder)
                    """)
            }
        }
        return (report.changes.map(\.summary).sorted(), tables)
    }

    /// Rewrites the rows (not the header) of one CSV file of a snapshot folder.
    func reorder(_ file: String, in folder: String, _ change: ([String]) -> [String]) throws {
        let path = (folder as NSString).appendingPathComponent(file)
        var lines = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\n")
        if lines.last == "" { lines.removeLast() }
        #expect(lines.allSatisfy { $0.filter { $0 == "\"" }.count % 2 == 0 }, "a record spans lines: reordering lines would break it")
        let rows = change(Array(lines.dropFirst()))
        try ([lines[0]] + rows).joined(separator: "\n").appending("\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    func copy(_ folder: String, to name: String) throws -> String {
        let copy = scratch.path(name)
        try FileManager.default.copyItem(atPath: folder, toPath: copy)
        return copy
    }

    @Test func theOrderOfAFilesRowsDoesNotChangeWhatAnImportCommits() throws {
        let first = scratch.path("s1"), second = scratch.path("s2")
        try SnapshotSynthesizer.generate(stations: 4_000, seed: 5, into: first)
        try SnapshotSynthesizer.next(of: first, changePercent: 5, seed: 6, into: second)
        let reference = try outcome("reference", first: first, second: second)
        #expect(reference.changes.count > 200)

        var random = SplitMix64(seed: 9)
        func shuffled(_ rows: [String]) -> [String] {
            var rows = rows
            for index in stride(from: rows.count - 1, to: 0, by: -1) { rows.swapAt(index, random.below(index + 1)) }
            return rows
        }
        // Rows out of place: one in fifty moved elsewhere, as an export lists a new station with its line.
        func scattered(_ rows: [String]) -> [String] {
            var rows = rows
            for _ in 0..<(rows.count / 50) {
                let row = rows.remove(at: random.below(rows.count))
                rows.insert(row, at: random.below(rows.count + 1))
            }
            return rows
        }
        let orders: [(String, ([String]) -> [String])] = [
            ("shuffled", shuffled), ("reversed", { $0.reversed() }), ("scattered", scattered),
        ]
        for (name, order) in orders {
            let folder = try copy(second, to: "s2-\(name)")
            for file in ["station.csv", "join.csv", "line.csv", "company.csv"] { try reorder(file, in: folder, order) }
            let reordered = try outcome(name, first: first, second: folder)
            #expect(reordered.changes == reference.changes, "\(name)")
            #expect(reordered.tables == reference.tables, "\(name)")
        }
    }

    @Test func aLongRunOfMissingRowsIsClosedRowByRow() throws {
        let first = scratch.path("s1")
        try SnapshotSynthesizer.generate(stations: 2_000, seed: 3, into: first)
        let second = try copy(first, to: "s2")
        var removed: [String] = []
        // More rows in a row than the scan steps over for one key, and the file's last rows.
        try reorder("station.csv", in: second) { rows in
            removed = Array(rows[500..<620]) + Array(rows.suffix(40))
            return Array(rows[..<500]) + Array(rows[620..<(rows.count - 40)])
        }
        let openRemoved = removed.filter { $0.split(separator: ",", omittingEmptySubsequences: false).reversed().dropFirst().first != "2" }
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try Importer(database).importSnapshot([first])
        let report = try Importer(database).importSnapshot([second], options: ImportOptions(allowMassClose: true, describeLimit: nil))
        let closed = Set(report.changes.filter { $0.kind == .delete && $0.table == "stations" }.map(\.key))
        let expected = Set(openRemoved.map { String($0.prefix { $0 != "," }) })
        #expect(!expected.isEmpty && closed == expected)
        #expect(report.count("stations", .update) == 0 && report.count("stations", .insert) == 0)
    }
}
