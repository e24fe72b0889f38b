import Foundation
import GRDB
import StationCheck
import StationCurate
import StationLog
import StationRelease
import StationSchema
import StationSupport
import Testing

@Suite struct WaiverTests {
    let scratch = Scratch()

    /// The base fixture with one error (dates out of order) and one warning (a long connection).
    private func databaseWithFindings() throws -> MasterDatabase {
        let database = try scratch.baseDatabase()
        try Curator(database).apply([
            LocatedOperation(.edit(table: .stations, key: ["1120102"], values: ["open_ymd": "2020-01-01", "close_ymd": "2019-12-31"])),
            LocatedOperation(.connect(line: 11201, stations: [1120101, 1120120])),
        ])
        return database
    }

    @Test func aWaiverMarksOneFindingAndIsRemovable() throws {
        let database = try databaseWithFindings()
        #expect(try Checker(database).check().blocking.map(\.key) == ["1120102"])
        try Checker(database).waive(rule: "dates-out-of-order", table: "stations", key: "1120102", reason: "upstream typo, reported")
        let report = try Checker(database).check()
        #expect(report.findings.map(\.waived) == [true, false])
        #expect(report.blocking.isEmpty)
        let waivers = try Checker(database).waivers(findings: report)
        #expect(waivers.map { "\($0.rule) \($0.table) \($0.key) \($0.reason) \($0.stillFound!)" }
            == ["dates-out-of-order stations 1120102 upstream typo, reported true"])
        // One rule, one key: the same row under another rule is not waived.
        try Checker(database).waive(rule: "group-dangling", table: "stations", key: "1120102", reason: "not yet", ahead: true)
        #expect(try Checker(database).check().findings.filter(\.waived).count == 1)
        #expect(try Checker(database).waivers(findings: Checker(database).check()).map(\.stillFound) == [true, false])

        try Checker(database).unwaive(rule: "dates-out-of-order", table: "stations", key: "1120102")
        #expect(try Checker(database).check().blocking.count == 1)
        #expect(throws: WaiverError.notWaived(FindingIdentity(rule: "dates-out-of-order", table: "stations", key: "1120102"))) {
            try Checker(database).unwaive(rule: "dates-out-of-order", table: "stations", key: "1120102")
        }
    }

    /// A station moved 1,700 km by a typo in `lat` is an error the release stops at, not a
    /// warning it lets through; a waiver (the station really moved) lets it go.
    @Test func aMoveNoStationMakesStopsTheReleaseUntilWaived() throws {
        let database = try scratch.baseDatabase()
        let edit = try CommandRunner.run(["edit", "--db", database.path, "stations", "9900101", "lat=20.1"])
        #expect(edit.status == 0 && edit.stdout.contains("station-moved-implausibly"), "\(edit.stdout)\(edit.stderr)")
        let refused = try CommandRunner.run(["release", "--db", database.path, "--out", scratch.path("release"), "--no-verify"])
        #expect(refused.status == 1 && refused.stderr.contains("station-moved-implausibly"), "\(refused.stderr)")
        #expect(refused.stderr.contains("no station moves more than 50 km: a typo in lat or lon?"), "\(refused.stderr)")
        #expect(try CommandRunner.run(["waive", "--db", database.path, "station-moved-implausibly", "stations", "9900101",
                                       "--reason", "test: the station really moved"]).status == 0)
        let released = try CommandRunner.run(["release", "--db", database.path, "--out", scratch.path("release"), "--no-verify"])
        #expect(released.status == 0, "\(released.stderr)")
    }

    @Test func aWaiverIsCuratorDataAndMakesNoVersion() throws {
        let database = try databaseWithFindings()
        let version = try database.dataVersion()
        try Checker(database).waive(rule: "connection-too-long", table: "connections", key: "11201/1120101/1120120", reason: "ferry")
        #expect(try database.dataVersion() == version)
        #expect(try LogReader(database).log(LogFilter(version: version)).count == 2)
    }

    @Test func badWaiversAreRefusedWithTheNearestRule() throws {
        let database = try databaseWithFindings()
        #expect(throws: WaiverError.unknownRule("dates-out-of-ordr", suggestion: "dates-out-of-order")) {
            try Checker(database).waive(rule: "dates-out-of-ordr", table: "stations", key: "1120102", reason: "x")
        }
        #expect(throws: WaiverError.unknownTable("station")) {
            try Checker(database).waive(rule: "dates-out-of-order", table: "station", key: "1120102", reason: "x")
        }
        #expect(throws: WaiverError.emptyReason) {
            try Checker(database).waive(rule: "dates-out-of-order", table: "stations", key: "1120102", reason: "  ")
        }
    }

    @Test func releaseRefusesAnUnwaivedErrorAndSkipChecksOverrides() throws {
        let database = try databaseWithFindings()
        let folder = scratch.path("release")
        #expect {
            try Publisher(database).release(ReleaseOptions(outputFolder: folder, verify: false))
        } throws: { error in
            (error as? ReleaseError).map {
                if case let .checksFailed(version, findings) = $0 { return version == 2 && findings.map(\.key) == ["1120102"] }
                return false
            } ?? false
        }
        // Nothing was published, and the folder the release made is gone with its lock.
        #expect(!FileManager.default.fileExists(atPath: folder))

        var skipping = ReleaseOptions(outputFolder: folder, verify: false)
        skipping.skipChecks = true
        let skipped = try Publisher(database).release(skipping)
        #expect(skipped.checks == nil && skipped.released.version == 2)

        try Checker(database).waive(rule: "dates-out-of-order", table: "stations", key: "1120102", reason: "upstream typo")
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["9900101"], values: ["weight": "2"]))])
        let checked = try Publisher(database).release(ReleaseOptions(outputFolder: folder, verify: false))
        #expect(checked.released.version == 3)
        #expect(checked.checks?.count(.error, waived: true) == 1)
        #expect(checked.checks?.count(.warning, waived: false) == 1)
        #expect(checked.checks?.count(.error, waived: false) == 0)
    }

    @Test func aReleaseCountsTheNewestVersionsRecordedFindingsAndChecksWholeWhatBlocks() throws {
        let database = try databaseWithFindings()
        try Checker(database).waive(rule: "dates-out-of-order", table: "stations", key: "1120102", reason: "upstream typo")
        let full = CheckTally(try Checker(database).check())
        let released = try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("a"), verify: false))
        #expect(released.checks == full)

        // The tally is the record's: a warning recorded for another row is counted.
        try database.queue.write {
            try $0.execute(sql: "INSERT INTO recorded_findings (rule, table_name, key_id) VALUES ('kana-not-katakana', 'stations', '1120101')")
        }
        let counted = try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("b"), verify: false))
        #expect(counted.checks?.count(.warning, waived: false) == full.count(.warning, waived: false) + 1)

        // An unwaived error in the record is not taken on its word: the whole check decides.
        try database.queue.write {
            try $0.execute(sql: "INSERT INTO recorded_findings (rule, table_name, key_id) VALUES ('coordinates-outside-japan', 'stations', '1120101')")
        }
        let checkedWhole = try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("c"), verify: false))
        #expect(checkedWhole.checks == full)

        // A record of another version, or none, is not used either.
        try database.queue.write { try $0.execute(sql: "UPDATE recorded_findings_version SET version = version - 1") }
        let unrecorded = try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("d"), verify: false))
        #expect(unrecorded.checks == full)
    }

    @Test func theCommandLineChecksWaivesAndReleases() throws {
        _ = try databaseWithFindings()
        let db = scratch.path("master.sqlite")
        let check = try CommandRunner.run(["check", "--db", db])
        #expect(check.status == 1)
        #expect(check.stdout.hasPrefix("Version 2: 1 error, 1 warning.\nerror: stations 1120102: dates-out-of-order: 陸奥市川 opens after it closes"))

        let json = try CommandRunner.run(["check", "--db", db, "--json"])
        #expect(json.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["version", "counts", "findings", "waivers"] && object["version"] as? Int == 2)
        #expect(object["counts"] as? [String: Int] == ["errors": 1, "warnings": 1, "waived_errors": 0, "waived_warnings": 0, "stale_waivers": 0])
        let findings = try #require(object["findings"] as? [[String: Any]])
        #expect(findings.map { Set($0.keys) } == Array(repeating: ["rule", "severity", "table", "key", "message", "waived"], count: 2))
        #expect(findings.map { $0["severity"] as? String } == ["error", "warning"])
        #expect(findings.map { $0["key"] as? String } == ["1120102", "11201/1120101/1120120"])
        #expect(findings.map { $0["waived"] as? Bool } == [false, false])

        let release = try CommandRunner.run(["release", "--db", db, "--out", scratch.path("out"), "--no-verify"])
        #expect(release.status == 1)
        #expect(release.stderr.contains("version 2 has 1 error-level finding that no waiver accepts; nothing was released:\n  stations 1120102: dates-out-of-order:"))
        #expect(release.stderr.contains("or release anyway with --skip-checks"))

        let skipped = try CommandRunner.run(["release", "--db", db, "--out", scratch.path("out"), "--no-verify", "--skip-checks"])
        #expect(skipped.status == 0)
        #expect(skipped.stderr.contains("Checks skipped (--skip-checks): this release was not checked."))

        let waive = try CommandRunner.run(["waive", "--db", db, "dates-out-of-order", "stations", "1120102", "--reason", "upstream typo", "--author", "hanako"])
        #expect(waive.status == 0 && waive.stdout == "Waived dates-out-of-order on stations 1120102.\n")
        let after = try CommandRunner.run(["check", "--db", db])
        #expect(after.status == 0)
        #expect(after.stdout.contains("error: stations 1120102: dates-out-of-order:") && after.stdout.contains("[waived]"))
        #expect(after.stdout.contains("Waivers (1):\n  dates-out-of-order stations 1120102: upstream typo (hanako, "))
        let typo = try CommandRunner.run(["check", "--db", db, "--rule", "kana-not-katakan"])
        #expect(typo.status == 2 && typo.stderr.contains("unknown rule 'kana-not-katakan' (did you mean 'kana-not-katakana'?)"))
    }
}
