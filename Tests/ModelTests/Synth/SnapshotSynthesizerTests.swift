import Foundation
import StationCheck
import StationDelta
import StationImport
import StationLog
import StationReview
import StationSchema
import StationSupport
import StationSynth
import Testing

@Suite struct SnapshotSynthesizerTests {
    let scratch = Scratch()

    func digests(_ folder: String) throws -> [String: String] {
        var result: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            result[name] = try FileDigest.sha256(ofFile: (folder as NSString).appendingPathComponent(name))
        }
        return result
    }

    @Test func theSameSeedGivesTheSameBytes() throws {
        try SnapshotSynthesizer.generate(stations: 3_000, seed: 42, into: scratch.path("a"))
        try SnapshotSynthesizer.generate(stations: 3_000, seed: 42, into: scratch.path("b"))
        try SnapshotSynthesizer.generate(stations: 3_000, seed: 43, into: scratch.path("c"))
        let a = try digests(scratch.path("a"))
        #expect(a.keys.sorted() == ["company.csv", "join.csv", "line.csv", "pref.csv", "station.csv"])
        #expect(a == (try digests(scratch.path("b"))))
        #expect(a["station.csv"] != (try digests(scratch.path("c")))["station.csv"])
        try SnapshotSynthesizer.next(of: scratch.path("a"), changePercent: 5, seed: 7, into: scratch.path("a2"))
        try SnapshotSynthesizer.next(of: scratch.path("b"), changePercent: 5, seed: 7, into: scratch.path("b2"))
        #expect(try digests(scratch.path("a2")) == digests(scratch.path("b2")))
    }

    @Test func aGeneratedSnapshotImportsCleanlyAndMatchesStatus() throws {
        let summary = try SnapshotSynthesizer.generate(stations: 5_000, seed: 1, into: scratch.path("s1"))
        let text = try String(contentsOfFile: scratch.path("s1/station.csv"), encoding: .utf8)
        #expect(text.contains("\"") && text.contains(", "))  // a few quoted fields with commas
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        let report = try Importer(database).importSnapshot([scratch.path("s1")])
        #expect(report.warnings.isEmpty)
        let status = try LogReader(database).status()
        #expect(status.tables.first { $0.table == "stations" }?.rows == 5_000)
        #expect(status.tables.first { $0.table == "connections" }?.rows == summary.rows["join.csv"])
        #expect(status.tables.first { $0.table == "lines" }?.rows == summary.rows["line.csv"])
        let closed = text.components(separatedBy: "\n").filter { $0.hasSuffix(",2001-03-31,2,\($0.split(separator: ",").first ?? "")") }.count
        #expect(status.tables.first { $0.table == "stations" }?.closed == closed)
    }

    /// A broken export: the same lines and stations, each station anywhere in Japan, so that
    /// nearly every connection is too long; the well-formed snapshot of the same seed is unchanged.
    @Test func aScatteredSnapshotMakesAboutOneFindingPerConnection() throws {
        try SnapshotSynthesizer.generate(stations: 2_000, seed: 5, into: scratch.path("plain"))
        let summary = try SnapshotSynthesizer.generate(stations: 2_000, seed: 5, scattered: true, into: scratch.path("scattered"))
        let plain = try digests(scratch.path("plain")), scattered = try digests(scratch.path("scattered"))
        #expect(plain["join.csv"] == scattered["join.csv"] && plain["station.csv"] != scattered["station.csv"])
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try Importer(database).importSnapshot([scratch.path("scattered")])
        let findings = try Checker(database).check().findings
        let tooLong = findings.filter { $0.rule == .connectionTooLong }.count
        let connections = summary.rows["join.csv"]!
        // Two random places in Japan are more than 50 km apart but for a few per cent of pairs.
        #expect(Double(tooLong) > 0.9 * Double(connections) && tooLong <= connections, "\(tooLong) of \(connections)")
        // In the order check gives them: errors first, then rule, table and the key's integers.
        let keys = findings.filter { $0.rule == .connectionTooLong }.map { $0.key.split(separator: "/").map { Int($0)! } }
        #expect(keys == keys.sorted { $0.lexicographicallyPrecedes($1) })
        let plainDatabase = try MasterDatabase.create(at: scratch.path("p.sqlite"))
        try Importer(plainDatabase).importSnapshot([scratch.path("plain")])
        #expect(try Checker(plainDatabase).check().findings.filter { $0.rule == .connectionTooLong }.isEmpty)
    }

    @Test func aNextSnapshotChangesAboutTheShareAsked() throws {
        try SnapshotSynthesizer.generate(stations: 10_000, seed: 1, into: scratch.path("s1"))
        let next = try SnapshotSynthesizer.next(of: scratch.path("s1"), changePercent: 2, seed: 2, into: scratch.path("s2"))
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try Importer(database).importSnapshot([scratch.path("s1")])
        let report = try Importer(database).importSnapshot([scratch.path("s2")])
        let stationChanges = report.count("stations", .update) + report.count("stations", .delete) + report.count("stations", .restore)
        #expect((120...280).contains(stationChanges), "\(stationChanges) of 10,000 stations changed for 2%")
        #expect(report.count("stations", .insert) == next.changes["station added"])
        #expect(report.count("connections", .delete) == next.changes["connection removed"])
        #expect(report.count("stations", .delete) == next.changes["station closed"])
    }

    @Test func theRealSnapshotCanBeChangedToo() throws {
        let next = try SnapshotSynthesizer.next(of: Fixtures.ekidata2021, changePercent: 1, seed: 3, into: scratch.path("next"))
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021])
        let report = try Importer(database).importSnapshot([scratch.path("next")])
        #expect(report.count("stations", .insert) == next.changes["station added"])
        #expect(report.totalChanges > 50)
    }

    /// Next snapshots of next snapshots (a long history, as the history benchmark makes) keep
    /// every station code unique and in range, so each one imports; and no closure predates its
    /// station's opening, so each version can be released.
    @Test func chainedNextSnapshotsImportOneAfterAnother() throws {
        try SnapshotSynthesizer.generate(stations: 2_000, seed: 3, into: scratch.path("g1"))
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try Importer(database).importSnapshot([scratch.path("g1")])
        for generation in 1...6 {
            try SnapshotSynthesizer.next(of: scratch.path("g\(generation)"), changePercent: 20, seed: UInt64(generation),
                                         into: scratch.path("g\(generation + 1)"))
            // A fifth of the stations changed each time: closures and reopenings beyond the guards' 5%.
            try Importer(database).importSnapshot([scratch.path("g\(generation + 1)")], options: ImportOptions(allowMassClose: true, allowMassReopen: true))
        }
        #expect(try database.dataVersion() == 7)
        #expect(try database.value("SELECT MAX(station_cd) FROM stations") ?? 0 <= Int64(Int32.max))
        #expect(try Checker(database).check().blocking.map(\.line) == [])
    }
}
