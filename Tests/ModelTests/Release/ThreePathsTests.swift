import Foundation
import GRDB
import StationCSV
import StationCheck
import StationCurate
import StationDelta
import StationImport
import StationLog
import StationManifest
import StationRelease
import StationReview
import StationSchema
import StationSupport
import Testing

/// A phone reaches the newest data by a delta, a full download or an app update (DOMAIN.md,
/// "three paths"); all three must leave it with the same records, splits included.
@Suite struct ThreePathsTests {
    let scratch = Scratch()

    /// The bundled data as the demo has it: 2019 (v1), 2021 (v2), the Hokuriku plan (v3) and one
    /// more curated version (v4); releases 2 and 4 in one folder.
    func hokurikuRelease() throws -> (MasterDatabase, String, ReleaseResult) {
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2019], options: ImportOptions(memo: "2019"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021], options: ImportOptions(memo: "2021"))
        let folder = scratch.path("release")
        var options = ReleaseOptions(outputFolder: folder, verify: false)
        options.skipChecks = true
        try Publisher(database).release(options)
        try Curator(database).apply(planAt: Fixtures.repository.appendingPathComponent("datasets/plans/2024-03-16-hokuriku.jsonl").path)
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1130101"], values: ["weight": "1"]))], memo: "Tokyo first")
        options.verify = true
        let result = try Publisher(database).release(options)
        return (database, folder, result)
    }

    /// A version-2 phone that visited JR West's 敦賀 and 大聖寺.
    func phoneAtVersion2(_ folder: String, name: String) throws -> String {
        try scratch.phone(from: (folder as NSString).appendingPathComponent("2/stations.sqlite"), name: name, completions: [
            (1141512, "2019-08-01", "敦賀", 1), (1141530, nil, "大聖寺", 2),
        ])
    }

    /// What an app does after a full download or an app update: its working database as main,
    /// the fresh one attached as `incoming`, the carry-over script in one transaction.
    func carryOver(from phone: String, into fresh: String, script: String) throws -> SQLiteShell.Result {
        let run = scratch.path("run-\(UUID().uuidString).sql")
        try (Data("ATTACH DATABASE \(try SQLLiteral.quoted(fresh)) AS incoming;\nBEGIN;\n".utf8)
            + (try Data(contentsOf: URL(fileURLWithPath: script))) + Data("COMMIT;\n".utf8)).write(to: URL(fileURLWithPath: run))
        return try SQLiteShell.run(script: run, database: phone)
    }

    @Test func aVersion2PhoneKeepsItsHokurikuSplitCreditOnEveryPath() throws {
        let (_, folder, result) = try hokurikuRelease()
        #expect(result.verification?.failures == [])
        #expect(result.verification?.passed.last == "delta, full download, app update: user records identical for versions 1…3")
        func file(_ path: String) -> String { (folder as NSString).appendingPathComponent(path) }
        let download = try #require(result.released.downloads.first { $0.from == 2 })
        let script = file(try #require(result.released.carryOver).path)
        let expected: [Int64: [String?]] = [
            1141512: ["2019-08-01", "敦賀", "1"], 9944001: ["2019-08-01", "敦賀", "1"],
            1141530: [nil, "大聖寺", "2"], 9944019: [nil, "大聖寺", "2"],
        ]

        // 1. The delta.
        let deltaPhone = try phoneAtVersion2(folder, name: "delta-phone.sqlite")
        #expect(download.kind == .delta)
        #expect(try scratch.apply(delta: file(download.path), to: deltaPhone).status == 0)
        #expect(try completions(ofDatabase: deltaPhone) == expected)

        // 2. The full download: the gzip, inflated, then the carry-over.
        let downloadPhone = try phoneAtVersion2(folder, name: "download-phone.sqlite")
        let downloaded = scratch.path("downloaded.sqlite")
        try Gunzip.read(file(result.released.databaseGzip.path)).write(to: URL(fileURLWithPath: downloaded))
        #expect(try FileDigest.sha256(ofFile: downloaded) == result.released.database.sha256)
        #expect(try carryOver(from: downloadPhone, into: downloaded, script: script).status == 0)
        #expect(try completions(ofDatabase: downloaded) == expected)
        #expect(try contentHash(ofDatabase: downloaded) == result.released.contentHash)

        // 3. The app update: the bundled file, then the same carry-over; run twice, nothing changes.
        let updatePhone = try phoneAtVersion2(folder, name: "update-phone.sqlite")
        let bundled = scratch.path("bundled.sqlite")
        try FileManager.default.copyItem(atPath: file(result.released.database.path), toPath: bundled)
        #expect(try carryOver(from: updatePhone, into: bundled, script: script).status == 0)
        #expect(try completions(ofDatabase: bundled) == expected)
        #expect(try carryOver(from: updatePhone, into: bundled, script: script).status == 0)
        #expect(try completions(ofDatabase: bundled) == expected)
    }

    @Test func theCarryOverReplaysAChainOfSplitsOnlyAfterThePhonesVersion() throws {
        let database = try scratch.baseDatabase()
        var first = ChangeBatch(), second = ChangeBatch()
        first.put(.stations, stationRow(9920601, name: "八戸", line: 11201))
        first.duplicate(old: 1120101, new: 9920601)
        try Curator(database).commit(first, memo: "v2: 1120101 → 9920601")
        second.put(.stations, stationRow(9920602, name: "八戸", line: 11201))
        second.duplicate(old: 9920601, new: 9920602)
        try Curator(database).commit(second, memo: "v3: 9920601 → 9920602")
        let result = try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("release")))
        #expect(result.verification?.failures == [])
        let script = scratch.path("release/3/carry-over.sql")
        let text = try String(contentsOfFile: script, encoding: .utf8)
        #expect(text.contains("SELECT 9920601, date, memo, updated_at FROM incoming.completions WHERE station_cd = 1120101 AND (SELECT from_version FROM temp.station_admin_carry_over) < 2;\n"
            + "INSERT OR IGNORE INTO incoming.completions (station_cd, date, memo, updated_at) SELECT 9920602, date, memo, updated_at FROM incoming.completions WHERE station_cd = 9920601 AND (SELECT from_version FROM temp.station_admin_carry_over) < 3;"))

        // At version 1 the chain carries 1120101's record to both; at version 2 only the second
        // split is new to the phone, and a record it already has on the new code stays.
        _ = try Publisher(database).buildClientDatabase(version: 1, at: scratch.path("v1.sqlite"))
        _ = try Publisher(database).buildClientDatabase(version: 2, at: scratch.path("v2.sqlite"))
        let fresh = scratch.path("release/3/stations.sqlite")
        let cases: [(Int, [(Int64, String?, String?, Int64?)], [Int64: [String?]])] = [
            (1, [(1120101, "2001-01-01", "a", 1)],
             [1120101: ["2001-01-01", "a", "1"], 9920601: ["2001-01-01", "a", "1"], 9920602: ["2001-01-01", "a", "1"]]),
            (2, [(1120101, "2001-01-01", "a", 1), (9920602, "2024-01-01", "mine", 9)],
             [1120101: ["2001-01-01", "a", "1"], 9920602: ["2024-01-01", "mine", "9"]]),
        ]
        for (version, records, expected) in cases {
            let phone = try scratch.phone(from: scratch.path("v\(version).sqlite"), name: "phone-\(version).sqlite", completions: records)
            let copy = scratch.path("fresh-\(version).sqlite")
            try FileManager.default.copyItem(atPath: fresh, toPath: copy)
            #expect(try carryOver(from: phone, into: copy, script: script).status == 0)
            #expect(try completions(ofDatabase: copy) == expected, "from version \(version)")
        }
        // A working database newer than the release is refused, and nothing is written.
        let newer = try scratch.phone(from: scratch.path("v2.sqlite"), name: "newer.sqlite", completions: [(1120101, nil, nil, nil)])
        try DatabaseQueue(path: newer).writeWithoutTransaction { try $0.execute(sql: "PRAGMA user_version = 4") }
        let copy = scratch.path("fresh-newer.sqlite")
        try FileManager.default.copyItem(atPath: fresh, toPath: copy)
        let refused = try carryOver(from: newer, into: copy, script: script)
        #expect(refused.status != 0 && refused.error.contains("the working database must be at data version 3 or older"))
        #expect(try completions(ofDatabase: copy).isEmpty)
    }

    @Test func verifyFailsWhenTheCarryOverLosesASplitAndNamesTheStations() throws {
        let database = try scratch.baseDatabase()
        var batch = ChangeBatch()
        batch.put(.stations, stationRow(9920601, name: "八戸", line: 11201))
        batch.duplicate(old: 1120101, new: 9920601)
        try Curator(database).commit(batch, memo: "v2")
        try Curator(database).commit({ var b = ChangeBatch(); b.put(.stations, stationRow(9920603, name: "x", line: 11201)); return b }(), memo: "v3")
        let folder = scratch.path("release")
        try Publisher(database).release(ReleaseOptions(outputFolder: folder))
        // Published consistently (the manifest's size and hash match) but without the split line.
        let script = scratch.path("release/3/carry-over.sql")
        let broken = try String(contentsOfFile: script, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.contains("SELECT 9920601") }.joined(separator: "\n")
        try broken.write(toFile: script, atomically: true, encoding: .utf8)
        let manifestPath = scratch.path("release/manifest.json")
        var manifest = try Manifest.decode(Data(contentsOf: URL(fileURLWithPath: manifestPath)))
        manifest.versions[0].carryOver = ReleasedFile(path: "3/carry-over.sql", bytes: Data(broken.utf8).count, sha256: FileDigest.sha256(Data(broken.utf8)))
        try manifest.encoded().write(to: URL(fileURLWithPath: manifestPath))
        let report = try Publisher(database).verifyRelease(folder: folder)
        #expect(report.failures.contains("version 3: full download from 1: the user record of station 9920601 should have been copied by a split, and is missing"))
        #expect(report.failures.contains("version 3: app update from 1: the user record of station 9920601 should have been copied by a split, and is missing"))
        #expect(!report.failures.contains { $0.contains("delta from") })
    }
}
