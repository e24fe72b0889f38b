import Foundation
import GRDB
import StationCheck
import StationImport
import StationSchema
import StationSynth
import StationVersion
import Testing

/// A first import's rules run on a copy of the master, on another core, while the log is
/// written (`FirstVersionCheck`): the copy must hold the version's uncommitted rows, and what it
/// finds must be what a check of the committed version finds.
@Suite struct FirstVersionCheckTests {
    let scratch = Scratch()

    @Test func theCopyHoldsTheWritersUncommittedRows() throws {
        let database = try scratch.baseDatabase()
        let outcome = try database.write { db -> (FirstVersionCheck.Outcome, Bool) in
            // Uncommitted, so no other connection of the master sees them; the copy must.
            try db.execute(sql: "UPDATE stations SET lat = 60.5 WHERE station_cd = 1120101")
            try db.execute(sql: "UPDATE stations SET open_ymd = '2001-01-01', close_ymd = '1999-01-01' WHERE station_cd = 1120102")
            let check = try #require(try FirstVersionCheck.start(db, database.declared))
            return (try check.wait(), false)
        }
        var found: [String] = []
        outcome.found.forEach { found.append("\($0.rule.rawValue) \($0.table.name) \($0.key)") }
        #expect(found.contains("coordinates-outside-japan stations 1120101"), "\(found)")
        #expect(found.contains("dates-out-of-order stations 1120102"), "\(found)")
        #expect(outcome.introduced.first.contains { $0.key == "1120101" && $0.message.contains("60.5") })
        // Rolled back: the master never had them.
        #expect(try Checker(database).check().findings.allSatisfy { !["1120101", "1120102"].contains($0.key) })
    }

    /// A broken export (every station anywhere in Japan) finds most rules: imported into an empty
    /// master, its recorded findings and its report are a check of the committed version's.
    @Test func aFirstImportFindsWhatACheckOfItFinds() throws {
        let snapshot = scratch.path("scattered")
        try SnapshotSynthesizer.generate(stations: 3_000, seed: 7, scattered: true, into: snapshot)
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        let report = try Importer(database).importSnapshot([snapshot])
        #expect(report.version == 1 && report.committed)

        let full = try Checker(database).check()
        let recorded = try database.read { db in try RecordedFindings.identities(db, version: 1) }
        #expect(recorded == Set(full.findings.map(\.identity)))
        let expected = IntroducedFindings(full.findings)
        #expect(report.findingCounts == Dictionary(uniqueKeysWithValues: CheckRule.allCases.map { ($0.rawValue, expected.counts[$0] ?? 0) }))
        #expect(report.findings.map { "\($0.rule.rawValue) \($0.key) \($0.message)" }
            == expected.first.map { "\($0.rule.rawValue) \($0.key) \($0.message)" })
        #expect(Set(full.findings.map(\.rule)).count >= 3, "\(Set(full.findings.map(\.rule.rawValue)))")
    }
}
