import Foundation
import GRDB
import StationCheck
import StationCurate
import StationImport
import StationLog
import StationRelease
import StationReview
import StationSchema
import StationSupport
import Testing

/// The curator's loop as a new user meets it: no value outside its domain gets in, a command
/// does what it says, nothing is published by mistake, and exit codes mean one thing.
@Suite struct CuratorLoopTests {
    let scratch = Scratch()

    /// Every command that writes a version ends with the one next step, and says when a release
    /// would be refused.
    @Test func aVersionWritingCommandEndsWithTheNextStep() throws {
        let database = try scratch.baseDatabase()
        let edited = try CommandRunner.run(["edit", "--db", database.path, "stations", "9900101", "weight=2"])
        #expect(edited.status == 0)
        #expect(edited.stdout.hasSuffix("\nNext: station-admin review, then station-admin release (a release would publish version 2 today).\n"), "\(edited.stdout)")
        let broken = try CommandRunner.run(["edit", "--db", database.path, "stations", "9900101", "open_ymd=2030-01-01", "close_ymd=2020-01-01"])
        #expect(broken.stdout.hasSuffix("\nNext: station-admin check (a release would be refused today: 1 error not waived; fix or waive it).\n"), "\(broken.stdout)")
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "陸奥市川", with: "陸奥市川駅")
        let imported = try CommandRunner.run(["import", "--db", database.path, snapshot.path])
        // Upstream did not change the dates, so the curated ones stay (three-way import): the
        // import says which it kept and that a release would still be refused.
        #expect(imported.stdout.contains("  stations 9900101 open_ymd: kept 2030-01-01 from v3 (the file says 2020-03-14)\n"), "\(imported.stdout)")
        #expect(imported.stdout.hasSuffix("\nNext: station-admin check (a release would be refused today: 1 error not waived; fix or waive it).\n"), "\(imported.stdout)")
        let mended = try CommandRunner.run(["edit", "--db", database.path, "stations", "9900101", "open_ymd=2020-03-14", "close_ymd="])
        #expect(mended.stdout.hasSuffix("\nNext: station-admin review, then station-admin release (a release would publish version 5 today).\n"), "\(mended.stdout)")
        let dryRun = try CommandRunner.run(["edit", "--db", database.path, "stations", "9900102", "weight=2", "--dry-run"])
        #expect(!dryRun.stdout.contains("Next:"), "a dry run writes no version")
    }

    /// The demo works in demo/ and never removes a folder it did not make: here a demo/ of the
    /// curator's own, beside a release/ folder, both left as they were.
    @Test func theDemoNeverRemovesAFolderItDidNotMake() throws {
        let repository = scratch.url.appendingPathComponent("repository")
        let scripts = repository.appendingPathComponent("scripts")
        try FileManager.default.createDirectory(at: scripts, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Fixtures.repository.appendingPathComponent("scripts/demo"), to: scripts.appendingPathComponent("demo"))
        for folder in ["demo", "release"] {
            try FileManager.default.createDirectory(at: repository.appendingPathComponent(folder), withIntermediateDirectories: true)
            try Data("mine\n".utf8).write(to: repository.appendingPathComponent("\(folder)/notes.txt"))
        }
        let result = try CommandRunner.run([scripts.appendingPathComponent("demo").path], program: URL(fileURLWithPath: "/bin/bash"))
        #expect(result.status == 1)
        #expect(result.stderr == "demo: demo/ exists and was not made by scripts/demo; move it away first (nothing was removed)\n")
        for folder in ["demo", "release"] {
            #expect(try String(contentsOf: repository.appendingPathComponent("\(folder)/notes.txt"), encoding: .utf8) == "mine\n")
        }
        #expect(try !String(contentsOf: Fixtures.repository.appendingPathComponent("scripts/demo"), encoding: .utf8).contains("rm -rf release"))
    }

    @Test func aWeightOutsideItsDomainIsRefusedAndNothingIsCommitted() throws {
        let database = try scratch.baseDatabase()
        func weight() throws -> Int? {
            try CommandRunner.run(["-readonly", database.path, "SELECT weight FROM stations WHERE station_cd = 1120101"],
                                  program: URL(fileURLWithPath: "/usr/bin/sqlite3")).stdout.split(separator: "\n").first.flatMap { Int($0) }
        }
        #expect(try weight() == MapWeight.unsampled)
        for value in ["0", "99", "-4", "10", "14"] {
            let edit = try CommandRunner.run(["edit", "--db", database.path, "stations", "1120101", "weight=\(value)"])
            #expect(edit.status == 1, "weight=\(value): \(edit.stdout)")
            #expect(edit.stderr.contains("weight \(value) is out of range (expected a map weight: 1 to 9 by hand, 11 or 12 sampled, 13 the rest)"),
                    "\(edit.stderr)")
        }
        // Empty would be stored as 13, not the NULL a report would show: refused, not misreported.
        let empty = try CommandRunner.run(["edit", "--db", database.path, "stations", "1120101", "weight="])
        #expect(empty.status == 1)
        #expect(empty.stderr.contains("weight is empty (expected a map weight: 1 to 9 by hand"), "\(empty.stderr)")
        // A plan goes through the same rule.
        #expect(throws: InputError.self) {
            try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1120101"], values: ["weight": "0"]))])
        }
        #expect(try weight() == MapWeight.unsampled)
        #expect(try database.dataVersion() == 1)

        for value in [1, 9, 11, 12, 2] {
            let edit = try CommandRunner.run(["edit", "--db", database.path, "stations", "1120101", "weight=\(value)"])
            #expect(edit.status == 0, "\(edit.stderr)")
            #expect(try weight() == value)
        }
    }

    @Test func aMasterWithNothingImportedIsNotReleased() throws {
        let path = scratch.path("empty.sqlite")
        let database = try MasterDatabase.create(at: path)
        #expect(throws: ReleaseError.nothingImported) {
            try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("release"), verify: false))
        }
        let release = try CommandRunner.run(["release", "--db", path, "--out", scratch.path("release")])
        #expect(release.status == 1)
        #expect(release.stderr.contains("nothing has been imported yet"), "\(release.stderr)")
        // Nothing changed: not even the folder the release would have made.
        #expect(!FileManager.default.fileExists(atPath: scratch.path("release")))
        // A folder that was there before keeps what it had.
        try FileManager.default.createDirectory(atPath: scratch.path("kept"), withIntermediateDirectories: false)
        #expect(try CommandRunner.run(["release", "--db", path, "--out", scratch.path("kept")]).status == 1)
        #expect(FileManager.default.fileExists(atPath: scratch.path("kept")))
    }

    @Test func diffExitCodeSaysWouldChangeWithOneAndFailedWithTwo() throws {
        let database = try scratch.baseDatabase()
        let same = try CommandRunner.run(["diff", "--db", database.path, Fixtures.base.path, "--exit-code"])
        #expect(same.status == 0, "\(same.stderr)")
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "陸奥市川", with: "陸奥市川駅")
        #expect(try CommandRunner.run(["diff", "--db", database.path, snapshot.path, "--exit-code"]).status == 1)
        let missing = try CommandRunner.run(["diff", "--db", database.path, scratch.path("no-such-folder"), "--exit-code"])
        #expect(missing.status == 2, "\(missing.stderr)")
        #expect(missing.stderr.contains("no-such-folder"))
        // Without --exit-code a failure is a failure, as for every command.
        #expect(try CommandRunner.run(["diff", "--db", database.path, scratch.path("no-such-folder")]).status == 1)
        let help = try CommandRunner.run(["diff", "--help"])
        let words = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("2 when the diff could not be made"))
    }

    @Test func jsonAndNLTogetherAreAUsageError() throws {
        let database = try scratch.baseDatabase()
        for arguments in [["log", "--json", "--nl"], ["diff", Fixtures.base.path, "--nl", "--json"]] {
            let result = try CommandRunner.run(arguments + ["--db", database.path])
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("choose one"), "\(result.stderr)")
        }
    }

    @Test func aWaiverNamesAFindingThatExistsUnlessAhead() throws {
        let database = try scratch.baseDatabase()
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1120102"], values: ["open_ymd": "2020-01-01", "close_ymd": "2019-12-31"]))])
        #expect(throws: WaiverError.wrongTable(rule: "connection-too-long", table: "stations", expected: ["connections"])) {
            try Checker(database).waive(rule: "connection-too-long", table: "stations", key: "42", reason: "x")
        }
        #expect(throws: WaiverError.badKey(table: "connections", key: "42")) {
            try Checker(database).waive(rule: "connection-too-long", table: "connections", key: "42", reason: "x")
        }
        // Only the key as `check` prints it: "01120102" would never match a finding.
        #expect(throws: WaiverError.badKey(table: "stations", key: "01120102")) {
            try Checker(database).waive(rule: "dates-out-of-order", table: "stations", key: "01120102", reason: "x", ahead: true)
        }
        #expect(throws: WaiverError.noSuchRow(table: "stations", key: "42")) {
            try Checker(database).waive(rule: "dates-out-of-order", table: "stations", key: "42", reason: "x")
        }
        #expect(throws: WaiverError.notFound(FindingIdentity(rule: "dates-out-of-order", table: "stations", key: "1120101"))) {
            try Checker(database).waive(rule: "dates-out-of-order", table: "stations", key: "1120101", reason: "x")
        }
        let refused = try CommandRunner.run(["waive", "--db", database.path, "connection-too-long", "stations", "42", "--reason", "x"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("connection-too-long checks connections, not stations"), "\(refused.stderr)")
        #expect(try Checker(database).waivers().isEmpty)

        try Checker(database).waive(rule: "dates-out-of-order", table: "stations", key: "1120102", reason: "upstream typo")
        try Checker(database).waive(rule: "dates-out-of-order", table: "stations", key: "1120101", reason: "the plan brings it", ahead: true)
        let text = try CommandRunner.run(["check", "--db", database.path])
        #expect(text.stdout.contains("dates-out-of-order stations 1120101: the plan brings it"), "\(text.stdout)")
        #expect(text.stdout.contains("stale: no finding matches it (remove it with station-admin unwaive dates-out-of-order stations 1120101)"))
        let json = try CommandRunner.run(["check", "--db", database.path, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
        let counts = object["counts"] as! [String: Int]
        #expect(counts["stale_waivers"] == 1 && counts["waived_errors"] == 1 && counts["errors"] == 0, "\(counts)")
        let waivers = object["waivers"] as! [[String: Any]]
        #expect(waivers.map { "\($0["key"]!) \($0["still_found"]!)" }.sorted() == ["1120101 0", "1120102 1"])
    }
}
