import Foundation
import StationImport
import StationRelease
import StationSchema
import StationSupport
import Testing

/// The bundled ekidata snapshots, against counts derived by an independent script
/// (`Helpers/expected_counts.py`, Python's csv module and the same written rules).
@Suite(.tags(.slow), .leftOutOfQuickRuns) struct RealSnapshotTests {
    static func independentCounts(from old: String, to new: String) throws -> [String: [String: Int]] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Helpers/expected_counts.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, old, new]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = PipeReader.readAll(out.fileHandleForReading)
        process.waitUntilExit()
        return try JSONDecoder().decode([String: [String: Int]].self, from: data)
    }

    @Test func importingBothSnapshotsGivesTheIndependentlyDerivedCounts() throws {
        let scratch = Scratch()
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        let first = try Importer(database).importSnapshot([Fixtures.ekidata2019])
        #expect(first.counts == (try Self.independentCounts(from: "/nonexistent", to: Fixtures.ekidata2019)))
        let second = try Importer(database).importSnapshot([Fixtures.ekidata2021])
        let expected = try Self.independentCounts(from: Fixtures.ekidata2019, to: Fixtures.ekidata2021)
        #expect(second.version == 2)
        #expect(second.counts == expected)
        // Spot checks of what SOURCE.md lists among the real changes.
        #expect(expected["stations"]?["INSERT"] == 17)
        #expect(try database.value("SELECT station_name FROM stations WHERE station_cd = 1122903") == "龍ケ崎市")
        #expect(try database.value("SELECT company_cd FROM lines WHERE line_cd = 99636") == 211)
        #expect(try database.value("SELECT e_status FROM stations WHERE station_cd = 1180430") == 2)
        #expect(second.warnings.count == 1 && second.warnings[0].contains("145 connections"))
    }
}
