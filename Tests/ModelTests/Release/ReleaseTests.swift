import Foundation
import GRDB
import StationCSV
import StationCheck
import StationCurate
import StationDelta
import StationLog
import StationManifest
import StationRelease
import StationReview
import StationSchema
import StationSupport
import Testing

@Suite struct ReleaseTests {
    let scratch = Scratch()

    /// Base fixture at version 1; version 2 renames a station, removes a connection and
    /// splits 八戸 1120101 into a new Aoimori station 9920607 on a new line.
    func twoVersions() throws -> MasterDatabase {
        let database = try scratch.baseDatabase()
        var batch = ChangeBatch()
        batch.put(.companies, ["company_cd": 246, "rr_cd": 99, "company_name": "青い森鉄道", "e_status": 0, "e_sort": 246])
        batch.put(.lines, ["line_cd": 99206, "company_cd": 246, "line_name": "青い森鉄道線", "e_status": 0, "e_sort": 99206])
        batch.put(.stations, stationRow(9920607, name: "八戸", line: 99206, group: 1120101))
        batch.duplicate(old: 1120101, new: 9920607)
        batch.remove(.connections, key: [11201, 1120101, 1120102])
        batch.put(.connections, ["line_cd": 99206, "station_cd1": 9920607, "station_cd2": 1120102])
        try Curator(database).commit(batch, memo: "Aoimori")
        return database
    }

    @Test func aReleaseHoldsTheClientTablesAndNothingOfTheCurators() throws {
        let database = try twoVersions()
        let result = try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("release")))
        #expect(result.released.version == 2)
        let queue = try DatabaseQueue(path: scratch.path("release/2/stations.sqlite"))
        try queue.read { db in
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            #expect(tables == ["client_schema", "companies", "completions", "connections", "lines", "prefectures", "stations"])
            #expect(try Int.fetchAll(db, sql: "SELECT version FROM client_schema") == [DeclaredSchema.shipped.clientSchema])
            #expect(try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'completions'")
                == "CREATE TABLE completions (station_cd INTEGER PRIMARY KEY, date TEXT, memo TEXT, updated_at INTEGER)")
            #expect(try Int.fetchOne(db, sql: "PRAGMA user_version") == 2)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM stations") == 25)
            #expect(try Int.fetchOne(db, sql: "SELECT weight FROM stations WHERE station_cd = 9920607") == 13)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name LIKE 'stations_by_%'") == 6)
            #expect(try Int.fetchOne(db, sql: "PRAGMA freelist_count") == 0)
        }
        try queue.close()
        #expect(result.released.rows == ["prefectures": 2, "companies": 3, "lines": 4, "stations": 25, "connections": 21])
        #expect(result.verification?.passed == [
            "delta 1 → 2: applied by sqlite3, content as version 2's, guard refuses other versions",
            "delta, full download, app update: user records identical for versions 1…1",
        ])
        #expect(result.verification?.failures == [])
    }

    @Test func theSameReleaseBuiltTwiceIsByteIdentical() throws {
        let database = try twoVersions()
        let first = try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("a")))
        let second = try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("b")))
        #expect(first.released == second.released)
        for file in ["2/stations.sqlite", "2/stations.sqlite.gz", "2/delta-from-1.sql.gz", "manifest.json"] {
            #expect(try FileDigest.sha256(ofFile: scratch.path("a/\(file)")) == FileDigest.sha256(ofFile: scratch.path("b/\(file)")), "\(file)")
        }
    }

    @Test func aPastVersionIsRebuiltExactly() throws {
        let database = try scratch.baseDatabase()
        try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("then"), verify: false))
        _ = try twoVersionsContinuing(database)
        let rebuilt = try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("now"), version: 1, verify: false))
        #expect(try FileDigest.sha256(ofFile: scratch.path("then/1/stations.sqlite")) == rebuilt.released.database.sha256)
        let empty = try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("now"), version: 0))
        #expect(empty.released.rows.values.allSatisfy { $0 == 0 } && empty.released.deltas.isEmpty)
        #expect(try FileDigest.sha256(ofFile: scratch.path("now/1/stations.sqlite")) == rebuilt.released.database.sha256)
        #expect(try ReleaseFolder(path: scratch.path("now")).manifest().versions.map(\.version) == [0, 1])
    }

    private func twoVersionsContinuing(_ database: MasterDatabase) throws -> MasterDatabase {
        var batch = ChangeBatch()
        batch.put(.stations, stationRow(1120101, name: "八戸駅", line: 11201))
        try Curator(database).commit(batch)
        return database
    }

    @Test func aSplitCopiesTheRecordToTheNewStationWithoutOverwriting() throws {
        let database = try twoVersions()
        try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("release"), version: 1, verify: false))
        try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("release")))
        let phone = try scratch.phone(from: scratch.path("release/1/stations.sqlite"), name: "phone.sqlite", completions: [
            (1120101, "2010-12-03", "it's \"JR\"\n八戸 🚃", 100),
            (1120120, nil, nil, nil),
        ])
        let result = try scratch.apply(delta: scratch.path("release/2/delta-from-1.sql.gz"), to: phone)
        #expect(result.status == 0, "\(result.error)")
        let records = try completions(ofDatabase: phone)
        #expect(records[9920607] == ["2010-12-03", "it's \"JR\"\n八戸 🚃", "100"])
        #expect(records[1120101] == ["2010-12-03", "it's \"JR\"\n八戸 🚃", "100"])
        #expect(records[1120120] == [nil, nil, nil])
        #expect(records.count == 3)
        #expect(try contentHash(ofDatabase: phone) == contentHash(ofDatabase: scratch.path("release/2/stations.sqlite")))

        let keeper = try scratch.phone(from: scratch.path("release/1/stations.sqlite"), name: "keeper.sqlite", completions: [
            (1120101, "2010-12-03", "old", 1), (9920607, "2024-03-16", "mine", 2),
        ])
        #expect(try scratch.apply(delta: scratch.path("release/2/delta-from-1.sql.gz"), to: keeper).status == 0)
        #expect(try completions(ofDatabase: keeper)[9920607] == ["2024-03-16", "mine", "2"])
    }

    @Test func theGuardRefusesAnotherVersionAndChangesNothing() throws {
        let database = try twoVersions()
        try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("release"), version: 0, verify: false))
        try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("release"), verify: false))
        let phone = try scratch.phone(from: scratch.path("release/0/stations.sqlite"), name: "phone.sqlite", completions: [(1, "x", nil, nil)])
        let before = try FileDigest.sha256(ofFile: phone)
        let result = try scratch.apply(delta: scratch.path("release/2/delta-from-1.sql.gz"), to: phone)
        #expect(result.status != 0)
        #expect(result.error.contains("CHECK constraint failed: this delta needs data version 1"))
        #expect(try FileDigest.sha256(ofFile: phone) == before)
    }

    @Test func theDeltaSendsEachKeyOnceInItsNewestState() throws {
        let database = try scratch.baseDatabase()
        for name in ["陸奥市川A", "陸奥市川B", "陸奥市川C"] {
            var batch = ChangeBatch()
            var row = stationRow(1120102, name: name, line: 11201)
            row["lon"] = 141.42896; row["lat"] = 40.57129
            batch.put(.stations, row)
            try Curator(database).commit(batch)
        }
        var batch = ChangeBatch()
        batch.remove(.connections, key: [99001, 9900105, 9900107])
        try Curator(database).commit(batch)
        batch = ChangeBatch()
        batch.put(.connections, ["line_cd": 99001, "station_cd1": 9900105, "station_cd2": 9900107])
        try Curator(database).commit(batch)  // removed and put back: the same as at version 1
        let output = scratch.path("delta.sql")
        let written = try DeltaExport(database).writeDelta(from: 1, into: .file(output))
        let sql = try String(contentsOfFile: output, encoding: .utf8)
        #expect(written.summary.statements == ["stations": ["update": 1]])
        // The rows put by the test leave post and address empty: only changed columns are sent.
        #expect(sql.contains("\nUPDATE stations SET station_name = '陸奥市川C', post = NULL, address = NULL WHERE station_cd = 1120102;\n"))
        #expect(!sql.contains("陸奥市川B") && !sql.contains("INSERT OR REPLACE"))
        #expect(sql.hasSuffix("PRAGMA user_version = 6;\n"))
        #expect(!sql.contains("BEGIN"))
        let wrapped = try DeltaExport(database).writeDelta(from: 1, transaction: true, into: .file(output))
        #expect(wrapped.sqlBytes > written.sqlBytes)
        #expect(try String(contentsOfFile: output, encoding: .utf8).hasSuffix("PRAGMA user_version = 6;\nCOMMIT;\n"))
    }

    @Test func aDeltaFromANonexistentVersionIsAClearError() throws {
        let database = try twoVersions()
        #expect(throws: NoSuchVersion(requested: 3, newest: 2, lowest: 0)) { try DeltaExport(database).writeDelta(from: 3, into: .file(scratch.path("d.sql"))) }
        #expect(throws: NoSuchVersion(requested: -1, newest: 2, lowest: 0)) { try DeltaExport(database).writeDelta(from: -1, into: .file(scratch.path("d.sql"))) }
        #expect(throws: NoSuchVersion(requested: 5, newest: 2, lowest: 0)) { try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("r"), version: 5)) }
        #expect(!FileManager.default.fileExists(atPath: scratch.path("d.sql")))
        let result = try CommandRunner.run(["delta", "--db", database.path, "--from", "7"])
        #expect(result.status == 1)
        #expect(result.stderr == "data version 7 does not exist (expected 0 to 2; `station-admin versions` lists them)\n")
    }

    @Test func aCorruptOrDisagreeingReleaseFolderIsRefusedAndKept() throws {
        let database = try twoVersions()
        let folder = scratch.path("release")
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, verify: false))
        let manifest = folder + "/manifest.json"

        // A release checks the older files' sizes (and hashes those it joins, DeltaChainTests);
        // `verify` hashes every file, so a byte changed in place is its to find.
        let delta = folder + "/2/delta-from-1.sql.gz"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: delta))
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: delta))
        #expect(throws: ReleaseError.self) { try Publisher(database).verifyRelease(folder: folder) }
        bytes.removeLast()
        try bytes.write(to: URL(fileURLWithPath: delta))
        let manifestBefore = try FileDigest.sha256(ofFile: manifest)
        do {
            try Publisher(database).release(ReleaseOptions(outputFolder: folder, version: 1))
            Issue.record("released into a disagreeing folder")
        } catch let error as ReleaseError {
            guard case .manifest(.disagrees(_, let problems)) = error else { Issue.record("\(error)"); return }
            #expect(problems.map(\.file) == ["2/delta-from-1.sql.gz"])
        }
        #expect(throws: ReleaseError.self) { try Publisher(database).verifyRelease(folder: folder) }
        #expect(try FileDigest.sha256(ofFile: manifest) == manifestBefore)
        #expect(!FileManager.default.fileExists(atPath: folder + "/1"))

        try Data("{\"newest\": 2,".utf8).write(to: URL(fileURLWithPath: manifest))
        let verify = try CommandRunner.run(["verify", "--db", database.path, "--out", folder])
        #expect(verify.status == 1)
        #expect(verify.stderr.hasPrefix("\(manifest): not a valid manifest (not JSON"))
        #expect(throws: ReleaseError.missingFolder(scratch.path("nowhere"))) { try Publisher(database).verifyRelease(folder: scratch.path("nowhere")) }
    }

    @Test func verifyChecksEveryDeltaOfEveryVersion() throws {
        let database = try twoVersions()
        let folder = scratch.path("release")
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, version: 1, verify: false))
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, verify: false))
        let report = try Publisher(database).verifyRelease(folder: folder)
        #expect(report.failures == [])
        #expect(report.passed == [
            "manifest unsigned (signing is opt-in: release --sign KEY; an app that pins keys refuses it)",
            "version 2: delta 1 → 2: applied by sqlite3, content as version 2's, guard refuses other versions",
            "version 2: delta, full download, app update: user records identical for versions 1…1",
            "2 of 2 versions listed as the master recorded publishing them",
        ])
    }

    /// A manifest whose content hash is not its database's: `verify` says so first (the hash is
    /// computed beside the paths' checks, on another core), and the delta's check names it too.
    @Test func verifyNamesADatabaseWhoseContentIsNotTheManifests() throws {
        let database = try twoVersions()
        let folder = scratch.path("release")
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, version: 1, verify: false))
        let released = try Publisher(database).release(ReleaseOptions(outputFolder: folder, verify: false)).released
        let manifestPath = (folder as NSString).appendingPathComponent(Manifest.fileName)
        var manifest = try Manifest.decode(Data(contentsOf: URL(fileURLWithPath: manifestPath)))
        let wrong = String(repeating: "0", count: 64)
        manifest.versions[manifest.versions.count - 1].contentHash = wrong
        try manifest.encoded().write(to: URL(fileURLWithPath: manifestPath))

        let report = try Publisher(database).verifyRelease(folder: folder)
        #expect(report.failures.first == "version 2: 2/stations.sqlite: content hash \(released.contentHash), expected \(wrong)")
        #expect(report.failures.contains { $0.hasPrefix("version 2: delta 1 → 2: content hash \(released.contentHash) differs from version 2's \(wrong)") })
        #expect(report.pathsPassed.isEmpty)
        // And the entry is not what the master recorded publishing.
        #expect(report.failures.last == "not what the master published: versions[2]: its content_hash differs from what the master published")
    }

    /// Version 0 is a new install (it downloads the database): no delta from 0. Every other
    /// older version gets its delta, unless the delta's gzip would be larger than the database's.
    @Test func theManifestTellsEveryOlderVersionWhatItDownloads() throws {
        let database = try twoVersions()
        // Version 3 adds 3,000 connections, version 4 removes them: the delta from 3 is 3,000
        // DELETEs, larger than the whole (small) database; from 1 and 2 they cancel out.
        let (added, removed) = try everyConnection(of: database)
        try Curator(database).commit(added, memo: "v3")
        try Curator(database).commit(removed, memo: "v4")
        let folder = scratch.path("release")
        let result = try Publisher(database).release(ReleaseOptions(outputFolder: folder))
        let released = result.released
        #expect(released.version == 4)
        #expect(released.downloads.map(\.from) == [1, 2, 3])
        #expect(released.downloads.map(\.kind) == [.delta, .delta, .full])
        #expect(released.downloads.last == ClientDownload(from: 3, kind: .full, path: "4/stations.sqlite.gz", carryOver: "4/carry-over.sql"))
        #expect(released.deltas.map(\.from) == [1, 2])
        #expect(released.deltas.allSatisfy { $0.file.bytes <= released.databaseGzip.bytes })
        #expect(released.deltas.first { $0.from == 1 }?.duplicates == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("release/4")).sorted()
            == ["carry-over.sql", "delta-from-1.sql.gz", "delta-from-2.sql.gz", "stations.sqlite", "stations.sqlite.gz"])
        // The delta that was not published would indeed have been larger.
        let unpublished = try DeltaExport(database).writeDelta(from: 3, gzip: true, into: .file(scratch.path("from-3.sql.gz")))
        #expect(unpublished.gzipBytes > released.databaseGzip.bytes)
        #expect(result.verification?.passed.last == "delta, full download, app update: user records identical for versions 1…3 (no delta published for 3)")
        let manifest = try String(contentsOfFile: scratch.path("release/manifest.json"), encoding: .utf8)
        #expect(manifest.contains("""
            "downloads" : [
                    {
                      "carry_over" : null,
                      "from" : 1,
                      "kind" : "delta",
                      "path" : "4/delta-from-1.sql.gz"
                    },
            """))
        #expect(manifest.contains("""
                    {
                      "carry_over" : "4/carry-over.sql",
                      "from" : 3,
                      "kind" : "full",
                      "path" : "4/stations.sqlite.gz"
                    }
            """))
    }
}
