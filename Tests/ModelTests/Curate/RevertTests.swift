import Foundation
import GRDB
import StationCheck
import StationCurate
import StationHistory
import StationImport
import StationRelease
import StationSchema
import StationVersion
import Testing

/// `revert V`: a new version that puts back every row V changed (DOMAIN.md, "Upstream and
/// curators": a version is undone only by a new one), each checked on the three update paths.
@Suite struct RevertTests {
    let scratch = Scratch()

    func releaseAndVerify(_ database: MasterDatabase) throws -> ReleaseResult {
        var options = ReleaseOptions(outputFolder: scratch.path("release"), verify: true)
        options.skipChecks = true
        return try Publisher(database).release(options)
    }

    @Test func revertingAPlanPutsItsRowsBackAndKeepsItsSplits() throws {
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021])
        var options = ReleaseOptions(outputFolder: scratch.path("release"), verify: false)
        options.skipChecks = true
        try Publisher(database).release(options)
        try Curator(database).apply(planAt: Fixtures.repository.appendingPathComponent("datasets/plans/2024-03-16-hokuriku.jsonl").path)
        try Publisher(database).release(options)
        let report = try Curator(database).revert(version: 2, memo: "the plan was early")
        #expect(report.committed && report.version == 3 && report.conflicts.isEmpty)
        #expect(try database.value("SELECT line_cd FROM stations WHERE station_cd = 1141513") == 11415)
        #expect(try database.value("SELECT line_name FROM lines WHERE line_cd = 11415") == "JR北陸本線(米原～金沢)")
        #expect(try database.value("SELECT e_status FROM stations WHERE station_cd = 1141543") == 0)
        #expect(try database.value("SELECT close_ymd FROM stations WHERE station_cd = 1141543") == String?.none)
        #expect(try database.value("SELECT e_status FROM companies WHERE company_cd = 301") == 2)
        #expect(try database.value("SELECT e_status FROM stations WHERE station_cd = 9944001") == 2)
        #expect(try database.value("SELECT COUNT(*) FROM connections WHERE line_cd = 99440") == 0)
        #expect(try database.value("SELECT COUNT(*) FROM connections WHERE line_cd = 11415 AND station_cd1 = 1141512 AND station_cd2 = 1141513") == 1)
        // The splits stay: phones that ran them keep the copies, and every phone runs them.
        #expect(try database.read { try UpdateLog.splits($0) }.map(\.version) == [2, 2])
        let result = try releaseAndVerify(database)
        #expect(result.verification?.failures == [])
        #expect(result.verification?.passed.last == "delta, full download, app update: user records identical for versions 1…2")
        // Reverting the revert brings the plan back.
        try Curator(database).revert(version: 3)
        #expect(try database.value("SELECT line_cd FROM stations WHERE station_cd = 1141513") == 99440)
        #expect(try database.value("SELECT e_status FROM stations WHERE station_cd = 9944001") == 0)
    }

    /// Upstream's files never carry `weight`: a curator's weight is undone by reverting its
    /// version, whatever imports of the table came after (one that changed the same row among
    /// them), and no conflict says upstream holds it.
    @Test func aColumnUpstreamNeverGivesIsRevertedWithoutAConflict() throws {
        let database = try scratch.baseDatabase()
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["9900101"], values: ["weight": "2"])),
                            LocatedOperation(.edit(table: .stations, key: ["9900102"], values: ["weight": "3"]))])
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "9900101,9900101,テスト中央,", with: "9900101,9900101,テスト中央駅,")
        #expect(try Importer(database).importSnapshot([snapshot.path]).committed)
        let report = try Curator(database).revert(version: 2)
        #expect(report.committed && report.conflicts.isEmpty)
        #expect(try database.value("SELECT weight FROM stations WHERE station_cd = 9900101") == 13)
        #expect(try database.value("SELECT weight FROM stations WHERE station_cd = 9900102") == 13)
        #expect(try database.value("SELECT station_name FROM stations WHERE station_cd = 9900101") == "テスト中央駅")
    }

    @Test func revertingASplitClosesTheNewStation() throws {
        let database = try scratch.baseDatabase()
        try Curator(database).apply([LocatedOperation(.split(old: 1120101, new: 9920607, line: nil, values: [:], connectTo: []))], memo: "Aoimori")
        try Curator(database).revert(version: 2)
        #expect(try database.value("SELECT e_status FROM stations WHERE station_cd = 9920607") == 2)
        #expect(try database.value("SELECT e_status FROM stations WHERE station_cd = 1120101") == 0)
        let result = try releaseAndVerify(database)
        #expect(result.verification?.failures == [])
    }

    @Test func revertingAnImportPutsBackTheSnapshotBefore() throws {
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2019])
        try Importer(database).importSnapshot([Fixtures.ekidata2021])
        let report = try Curator(database).revert(version: 2, memo: "back to 2019")
        #expect(report.committed)
        // Every table as version 1 had it: renamed, closed and added rows alike.
        let state: (Int) throws -> [String] = { version in
            try database.read { db in
                try MasterTable.all.flatMap { table in
                    try String.fetchAll(db, sql: "SELECT \(table.keyText(alias: "s")) || '|' || quote(\(table.columnNames.map { "s." + $0 }.joined(separator: ") || '|' || quote(")))"
                        + " FROM (\(VersionedState(table: table, version: version).select())) s WHERE \(table.closesByStatus ? "s.e_status <> 2" : "1") ORDER BY 1")
                }
            }
        }
        #expect(try state(3) == (try state(1)))
        #expect(try releaseAndVerify(database).verification?.failures == [])
        // Upstream's base stays 2021's: importing it again does not undo the revert.
        #expect(try Importer(database).importSnapshot([Fixtures.ekidata2021]).totalChanges == 0)
    }

    @Test func aColumnALaterVersionChangedIsAConflict() throws {
        let database = try scratch.baseDatabase()
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1120102"], values: ["station_name": "陸奥市川駅", "weight": "5"]))])
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1120102"], values: ["station_name": "むついちかわ", "post": "039-9999"]))])
        let before = try database.settledSHA256()
        #expect {
            try Curator(database).revert(version: 2)
        } throws: { error in
            guard case let RevertError.undecided(version, conflicts) = error else { return false }
            return version == 2 && conflicts.map(\.description) == ["stations 1120102 station_name: base 陸奥市川駅; ours むついちかわ (v3); theirs 陸奥市川"]
        }
        #expect(try database.settledSHA256() == before)
        // The weight no later version touched goes back whatever is decided.
        let dry = try Curator(database).revert(version: 2, dryRun: true)
        #expect(!dry.committed && dry.conflicts.map(\.decision) == [nil])
        try Curator(database).revert(version: 2, decisions: MergeDecisions(prefer: .ours))
        #expect(try database.value("SELECT station_name FROM stations WHERE station_cd = 1120102") == "むついちかわ")
        #expect(try database.value("SELECT weight FROM stations WHERE station_cd = 1120102") == 13)
        // A column version 2 did not change is no conflict, and stays as the later version set it.
        #expect(try database.value("SELECT post FROM stations WHERE station_cd = 1120102") == "039-9999")
        try Curator(database).revert(version: 3, decisions: MergeDecisions(prefer: .theirs))
        #expect(try database.value("SELECT station_name FROM stations WHERE station_cd = 1120102") == "陸奥市川駅")
        #expect(throws: NoSuchVersion(requested: 9, newest: 5)) { try Curator(database).revert(version: 9) }
    }

    /// 東滝川 (1110602) closed by a curator with a provisional date (v3), then by upstream too, on
    /// another date that the import took (v4). Reverting v3 would reopen a station upstream has
    /// closed: a conflict, refused until decided; decided one column each way, it would leave an
    /// open station with a close date: refused; decided alike, committed.
    @Test func aRevertAgainstWhatUpstreamNowHoldsIsAConflictAndNeverLeavesARuleBroken() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2019])
        try Importer(database).importSnapshot([Fixtures.ekidata2021])
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1110602"], values: ["e_status": "2", "close_ymd": "2025-03-01"]))])
        let snapshot = try UpstreamSnapshots.from2021(into: scratch.path("2025-04-01"), date: "20250401") { file, line in
            guard file.hasPrefix("station"), line.hasPrefix("1110602,") else { return line }
            var fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            fields[12] = "2025-03-15"
            fields[13] = "2"
            return fields.joined(separator: ",")
        }
        var options = ImportOptions()
        options.decisions = MergeDecisions(prefer: .theirs)
        try Importer(database).importSnapshot([snapshot], options: options)
        #expect(try database.value("SELECT close_ymd FROM stations WHERE station_cd = 1110602") == "2025-03-15")
        let before = try database.settledSHA256()
        #expect {
            try Curator(database).revert(version: 3)
        } throws: { error in
            guard case let RevertError.undecided(3, conflicts) = error else { return false }
            return conflicts.map(\.column) == ["close_ymd", "e_status"] || conflicts.map(\.column) == ["e_status", "close_ymd"]
        }
        #expect(try database.settledSHA256() == before)
        // One column each way: an open station with a close date. Refused, naming the row.
        let conflicts = try Curator(database).revert(version: 3, dryRun: true).conflicts
        let mixed = scratch.path("mixed.jsonl")
        let skeleton = try MergeDecisions.skeleton(conflicts: conflicts, adoptions: [])
        try skeleton.split(separator: "\n").map { line in
            line.contains("\"e_status\"") ? line.replacingOccurrences(of: "\"take\":null", with: "\"take\":\"theirs\"")
                : line.replacingOccurrences(of: "\"take\":null", with: "\"take\":\"ours\"")
        }.joined(separator: "\n").write(toFile: mixed, atomically: true, encoding: .utf8)
        var decisions = MergeDecisions()
        decisions = try decisions.adding(resolutionFile: mixed)
        #expect {
            try Curator(database).revert(version: 3, decisions: decisions)
        } throws: { error in
            guard case let RevertError.breaksRules(3, rows) = error else { return false }
            return rows == ["stations 1110602 would be open (e_status 0) with close_ymd '2025-03-15'"]
                || rows.first?.hasPrefix("stations 1110602 would be open (e_status 0) with close_ymd") == true
        }
        #expect(try database.settledSHA256() == before)
        // Decided alike: the station stays as upstream has it, or comes back open without a date.
        let kept = try Curator(database).revert(version: 3, decisions: MergeDecisions(prefer: .ours), dryRun: true)
        #expect(kept.conflicts.count == 2)
        try Curator(database).revert(version: 3, decisions: MergeDecisions(prefer: .theirs))
        #expect(try database.value("SELECT e_status FROM stations WHERE station_cd = 1110602") == 0)
        #expect(try database.value("SELECT close_ymd FROM stations WHERE station_cd = 1110602") == nil as String?)
    }

    /// The Hokuriku plan (v2), then upstream's snapshot of the same event adopted (v3). Reverting
    /// the plan now goes against upstream for each of its stations' lines and connections: every
    /// one a conflict. Decided for the master, nothing of upstream's is undone; decided for the
    /// plan's "before", the stations go back to JR's line with JR's connections, and upstream's
    /// connections of its new line go with the move; decided mixed (stations kept, connections
    /// put back), refused, naming them. Never a connection off its line.
    @Test func revertingAPlanUpstreamHasAdoptedIsDecidedAndNeverLeavesAConnectionOffItsLine() throws {
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021])
        try Curator(database).apply(planAt: Fixtures.repository.appendingPathComponent("datasets/plans/2024-03-16-hokuriku.jsonl").path)
        let upstream = try UpstreamSnapshots.hokuriku2024(into: scratch.path("upstream"))
        try Importer(database).importSnapshot([upstream], options: ImportOptions(decisions: MergeDecisions(adoptAll: true)))
        let before = try database.settledSHA256()

        #expect {
            try Curator(database).revert(version: 2)
        } throws: { error in
            guard case let RevertError.undecided(2, conflicts) = error else { return false }
            // JR's connections the plan removed, upstream lacks too; IR's it added, upstream has.
            return conflicts.contains { $0.table == "connections" && $0.key == "11415/1141513/1141514" && $0.column == "row" && $0.theirs == .text("present") }
                && conflicts.contains { $0.table == "connections" && $0.key == "99426/1141530/1141531" && $0.theirs == .text("absent") }
                && conflicts.contains { $0.table == "stations" && $0.key == "1141513" && $0.column == "line_cd" }
        }
        #expect(try database.settledSHA256() == before)

        func offLine() throws -> [String] {
            try Checker(database).check().findings.filter { $0.rule == .connectionOffItsLine }.map(\.key)
        }
        // For the plan's "before": JR's connections come back with the stations, and the stations
        // take their connections on upstream's line 99428 (v3) with them, as a move does.
        let theirs = try Curator(database).revert(version: 2, decisions: MergeDecisions(prefer: .theirs), dryRun: true)
        #expect(theirs.changes.map(\.summary).contains("DELETE connections 99428/1141513/1141514"))
        #expect(theirs.changes.map(\.summary).contains("INSERT connections 11415/1141513/1141514"))
        #expect(try database.settledSHA256() == before)

        // Mixed: the stations' lines kept, JR's connections put back: refused.
        let conflicts = try Curator(database).revert(version: 2, dryRun: true).conflicts
        let mixed = scratch.path("mixed.jsonl")
        try MergeDecisions.skeleton(conflicts: conflicts, adoptions: []).split(separator: "\n").map { line in
            line.replacingOccurrences(of: "\"take\":null", with: line.contains("\"connections\"") ? "\"take\":\"theirs\"" : "\"take\":\"ours\"")
        }.joined(separator: "\n").write(toFile: mixed, atomically: true, encoding: .utf8)
        var decisions = MergeDecisions()
        decisions = try decisions.adding(resolutionFile: mixed)
        #expect {
            try Curator(database).revert(version: 2, decisions: decisions)
        } throws: { error in
            guard case let RevertError.breaksRules(2, rows) = error else { return false }
            return rows.contains("connections 11415/1141513/1141514 of open line 11415 would run to 1141513 on line 99428 and 1141514 on line 99428")
        }
        #expect(try database.settledSHA256() == before)

        // For the master: upstream's lines and connections stay; no connection off its line.
        try Curator(database).revert(version: 2, decisions: MergeDecisions(prefer: .ours))
        #expect(try database.value("SELECT line_cd FROM stations WHERE station_cd = 1141513") == 99428)
        #expect(try database.value("SELECT COUNT(*) FROM connections WHERE line_cd = 11415 AND station_cd1 = 1141513") == 0)
        #expect(try offLine() == [])
    }
}
