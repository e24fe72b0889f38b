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

/// A release publishes exactly the state it claims: one read of the master, one writer per
/// folder, one master per folder, and a folder that any interruption leaves repairable.
@Suite(.tags(.slow), .leftOutOfQuickRuns) struct SafePublishingTests {
    let scratch = Scratch()

    /// Version 1 is the base fixture; version 2 renames 八戸 and adds a station.
    func twoVersions(name: String = "master.sqlite") throws -> MasterDatabase {
        let database = try scratch.baseDatabase(name: name)
        try Curator(database).commit(Self.renaming(1120101, to: "八戸（二）"), memo: "v2")
        return database
    }

    static func renaming(_ station: Int64, to name: String) -> ChangeBatch {
        var batch = ChangeBatch()
        batch.put(.stations, stationRow(station, name: name, line: 11201))
        return batch
    }

    /// Every file of a folder with its SHA-256, the lock file aside.
    func snapshot(_ folder: String) throws -> [String: String] { try folderFiles(folder) }

    // MARK: 1. One state of the master

    @Test(arguments: [ReleaseStep.clientTablesBuilt, .deltasWritten])
    func aVersionCommittedDuringAReleaseIsNotSeen(_ step: ReleaseStep) throws {
        let database = try twoVersions()
        let expected = try Publisher(database).buildClientDatabase(version: 2, at: scratch.path("expected-2.sqlite"))
        let other = try MasterDatabase.open(at: database.path)
        let committed = Locked(false)
        var options = ReleaseOptions(outputFolder: scratch.path("release"))
        options.onStep = { done in
            guard done == step else { return }
            // Another process's import, between two phases of this release.
            try Curator(other).commit(Self.renaming(1120102, to: "陸奥市川（三）"), memo: "v3")
            committed.withLock { $0 = true }
        }
        let result = try Publisher(database).release(options)
        #expect(committed.withLock { $0 })
        #expect(try database.dataVersion() == 3)
        #expect(result.released.version == 2)
        #expect(result.released.contentHash == expected.contentHash)
        #expect(try contentHash(ofDatabase: scratch.path("release/2/stations.sqlite")) == expected.contentHash)
        #expect(result.verification?.failures == [])
        // Every delta brings its base exactly to version 2, not to 3.
        for delta in result.released.deltas {
            _ = try Publisher(database).buildClientDatabase(version: delta.from, at: scratch.path("base-\(delta.from).sqlite"))
            let phone = try scratch.phone(from: scratch.path("base-\(delta.from).sqlite"), name: "phone-\(delta.from).sqlite", completions: [])
            #expect(try scratch.apply(delta: scratch.path("release/\(delta.file.path)"), to: phone).status == 0)
            #expect(try contentHash(ofDatabase: phone) == expected.contentHash)
        }
        #expect(try Publisher(database).verifyRelease(folder: scratch.path("release")).failures == [])
    }

    // MARK: 2. One writer, one master per folder

    @Test func aSecondReleaseIntoABusyFolderWaitsThenFailsClearly() throws {
        let database = try twoVersions()
        let folder = scratch.path("release")
        let waited = Locked<[String]>([])
        let secondError = Locked<Error?>(nil)
        // A second process's handle: the first release's connection is busy with its own read.
        let other = try MasterDatabase.open(at: database.path)
        var options = ReleaseOptions(outputFolder: folder, version: 2, verify: false)
        options.onStep = { step in
            guard step == .deltasWritten else { return }
            var second = ReleaseOptions(outputFolder: folder, version: 1, verify: false)
            second.lockTimeout = 0.3
            second.onWait = { message in waited.withLock { $0.append(message) } }
            do { try Publisher(other).release(second) } catch { secondError.withLock { $0 = error } }
        }
        try Publisher(database).release(options)
        #expect(waited.withLock { $0 } == ["\(folder): waiting for another StationAdmin process (pid \(getpid())) that is writing this release folder"])
        #expect(secondError.withLock { $0 } as? ReleaseError == .folderBusy(folder, holder: getpid()))
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, version: 1, verify: false))
        #expect(try ReleaseFolder(path: folder).manifest().versions.map(\.version) == [1, 2])
    }

    @Test func twoReleaseProcessesIntoOneFolderBothLand() throws {
        let database = try twoVersions()
        let folder = scratch.path("release")
        let processes = try [1, 2].map { version -> Process in
            let process = Process()
            process.executableURL = CommandRunner.executable
            process.arguments = ["release", "--db", database.path, "--out", folder, "--version", "\(version)"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        for process in processes { process.waitUntilExit() }
        #expect(processes.map(\.terminationStatus) == [0, 0])
        #expect(try ReleaseFolder(path: folder).manifest().versions.map(\.version) == [1, 2])
        #expect(try Publisher(database).verifyRelease(folder: folder).failures == [])
    }

    @Test func aFolderOfAnotherMasterIsRefusedAndLeftAlone() throws {
        let first = try twoVersions(name: "a.sqlite")
        let second = try twoVersions(name: "b.sqlite")
        let folder = scratch.path("release")
        try Publisher(first).release(ReleaseOptions(outputFolder: folder, verify: false))
        let before = try snapshot(folder)
        let manifest = try ReleaseFolder(path: folder).manifest()
        #expect(manifest.lineage == (try first.lineage()))
        #expect(try first.lineage() != second.lineage())
        let expected = ReleaseError.otherLineage(folder, folder: try first.lineage()!, master: try second.lineage()!)
        #expect(throws: expected) { try Publisher(second).release(ReleaseOptions(outputFolder: folder, verify: false)) }
        #expect(throws: expected) { try Publisher(second).verifyRelease(folder: folder) }
        #expect(try snapshot(folder) == before)

        let result = try CommandRunner.run(["release", "--db", second.path, "--out", folder])
        #expect(result.status == 1)
        #expect(result.stderr == expected.errorDescription! + "\n")
    }

    @Test func aVersionFolderNoManifestListsIsNotReplaced() throws {
        let database = try twoVersions()
        let folder = scratch.path("release")
        try FileManager.default.createDirectory(atPath: scratch.path("release/2"), withIntermediateDirectories: true)
        try "someone's notes".write(toFile: scratch.path("release/2/notes.txt"), atomically: true, encoding: .utf8)
        #expect(throws: ReleaseError.notOurs(scratch.path("release/2"))) {
            try Publisher(database).release(ReleaseOptions(outputFolder: folder, verify: false))
        }
        #expect(try String(contentsOfFile: scratch.path("release/2/notes.txt"), encoding: .utf8) == "someone's notes")
    }

    /// A folder of someone else's files, with no manifest, is refused before anything is
    /// written in it: not even the lock file.
    @Test func aFolderOfSomeoneElsesFilesGetsNotEvenALockFile() throws {
        let database = try twoVersions()
        let folder = scratch.path("photos")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "someone's notes".write(toFile: scratch.path("photos/notes.txt"), atomically: true, encoding: .utf8)
        #expect(throws: ReleaseError.notOurs(scratch.path("photos/notes.txt"))) {
            try Publisher(database).release(ReleaseOptions(outputFolder: folder, verify: false))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["notes.txt"])
    }

    // MARK: 3. Interrupted at any step, repaired by the next release

    /// For each step, a `release` process killed right after it (SIGKILL, through the seam):
    /// the folder then holds a consistent manifest or a publish intent, and the next release
    /// completes it, removes what the dead one left, and verifies.
    @Test(arguments: ReleaseStep.allCases)
    func aReleaseKilledAtAnyStepLeavesAFolderTheNextReleaseCompletes(_ step: ReleaseStep) throws {
        let database = try twoVersions()
        let folder = scratch.path("release")
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, version: 1, verify: false))
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, version: 2, verify: false))
        // A curated change, so that re-releasing version 3 over itself has something to swap.
        try Curator(database).commit(Self.renaming(1120103, to: "剣吉（三）"), memo: "v3")
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, version: 3, verify: false))

        let killed = try CommandRunner.run(
            ["release", "--db", database.path, "--out", folder, "--version", "3"],
            environment: ["STATION_ADMIN_KILL_AT": step.rawValue])
        #expect(killed.status == SIGKILL, "killed at \(step.rawValue)")
        let releaseFolder = ReleaseFolder(path: folder)
        let hasIntent = FileManager.default.fileExists(atPath: releaseFolder.intentPath)
        if !hasIntent { #expect(throws: Never.self) { try releaseFolder.manifest() } }
        #expect(hasIntent == [.intentWritten, .oldVersionMovedAside, .newVersionMovedIn, .manifestWritten].contains(step))
        if hasIntent {
            let verify = try CommandRunner.run(["verify", "--db", database.path, "--out", folder])
            #expect(verify.status == 1)
            #expect(verify.stderr == ReleaseError.interruptedRelease(folder).errorDescription! + "\n")
        }

        let repair = try CommandRunner.run(["release", "--db", database.path, "--out", folder, "--version", "3"])
        #expect(repair.status == 0, "\(repair.stderr)")
        if hasIntent {
            #expect(repair.stderr.contains("Completed the interrupted release of version 3 first."))
        } else {
            #expect(repair.stderr.contains("Removed what interrupted releases left: .building-"))
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(names == [".lock", "1", "2", "3", "manifest.json"])
        #expect(try releaseFolder.manifest().versions.map(\.version) == [1, 2, 3])
        #expect(try Publisher(database).verifyRelease(folder: folder).failures == [])
    }

    /// A publish interrupted by a release of before manifests were staged (its intent embeds the
    /// manifest, keys as Swift names them) is completed by this one.
    @Test func anIntentThatEmbedsItsManifestIsCompleted() throws {
        let database = try twoVersions()
        let folder = scratch.path("release")
        try Publisher(database).release(ReleaseOptions(outputFolder: folder, version: 1, verify: false))
        let killed = try CommandRunner.run(
            ["release", "--db", database.path, "--out", folder, "--version", "2"],
            environment: ["STATION_ADMIN_KILL_AT": ReleaseStep.intentWritten.rawValue])
        #expect(killed.status == SIGKILL)
        // The intent as the earlier release wrote it: the manifest inside, nothing staged.
        let releaseFolder = ReleaseFolder(path: folder)
        let intent = try PublishIntent.decode(Data(contentsOf: URL(fileURLWithPath: releaseFolder.intentPath)))
        let staged = releaseFolder.filePath(ReleaseFolder.stagedManifest(in: intent.building))
        let manifest = try Manifest.decode(Data(contentsOf: URL(fileURLWithPath: staged)))
        try FileManager.default.removeItem(atPath: staged)
        let swiftNames = JSONEncoder()
        swiftNames.keyEncodingStrategy = .custom { path in
            let words = path.last!.stringValue.split(separator: "_")
            return LegacyKey(stringValue: String(words[0]) + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined())
        }
        let legacy = try swiftNames.encode(PublishIntent(building: intent.building, version: 2, manifest: manifest))
        #expect(String(decoding: legacy, as: UTF8.self).contains("\"databaseGzip\""))
        try legacy.write(to: URL(fileURLWithPath: releaseFolder.intentPath))

        let repair = try CommandRunner.run(["release", "--db", database.path, "--out", folder, "--version", "2"])
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(repair.stderr.contains("Completed the interrupted release of version 2 first."))
        #expect(try releaseFolder.manifest().versions.map(\.version) == [1, 2])
        #expect(try Publisher(database).verifyRelease(folder: folder).failures == [])
    }

    private struct LegacyKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    // MARK: 4. Never a file that is not a master database

    func foreignFiles() throws -> [String: String] {
        let other = scratch.path("notes.sqlite")
        let queue = try DatabaseQueue(path: other)
        try queue.write { try $0.execute(sql: "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')") }
        try queue.close()
        let database = try twoVersions()
        try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("release"), verify: false))
        #expect(FileManager.default.createFile(atPath: scratch.path("empty.sqlite"), contents: Data()))
        try "station_cd\n1\n".write(toFile: scratch.path("text.csv"), atomically: true, encoding: .utf8)
        return [
            "another application's database": other,
            "a client's stations.sqlite": scratch.path("release/2/stations.sqlite"),
            "an empty file": scratch.path("empty.sqlite"),
            "a text file": scratch.path("text.csv"),
        ]
    }

    @Test func everyCommandRefusesAFileThatIsNotAMasterAndLeavesItByteIdentical() throws {
        for (kind, path) in try foreignFiles() {
            let before = try FileDigest.sha256(ofFile: path)
            for arguments in [["status"], ["log"], ["suggest"], ["delta", "--from", "0"], ["import", Fixtures.base.path],
                              ["diff", Fixtures.base.path], ["release", "--out", scratch.path("out")], ["verify", "--out", scratch.path("release")],
                              ["edit", "stations", "1120101", "weight=1"], ["weights"]] {
                let result = try CommandRunner.run(arguments + ["--db", path])
                #expect(result.status == 1, "\(kind): \(arguments)")
                #expect(result.stderr == "\(path): not a StationAdmin master database (create one with station-admin init)\n", "\(kind): \(arguments)")
            }
            #expect(try FileDigest.sha256(ofFile: path) == before, "\(kind)")
            #expect(!FileManager.default.fileExists(atPath: path + "-wal") && !FileManager.default.fileExists(atPath: path + "-journal"))
        }
    }

    @Test func aFolderGivenAsTheMasterIsNamed() throws {
        let result = try CommandRunner.run(["status", "--db", scratch.url.path])
        #expect(result.status == 1)
        #expect(result.stderr == "\(scratch.url.path): a folder, not a master database (expected the path of a file made by `station-admin init`)\n")
    }

    /// A master made before stamps (recognised by its migration ids) still works; reading
    /// leaves it byte for byte, the first write stamps it with a lineage.
    @Test func aMasterFromBeforeStampsIsReadAsIsAndStampedOnItsFirstWrite() throws {
        let path = scratch.path("old.sqlite")
        let queue = try DatabaseQueue(path: path)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("createMasterTables") { try $0.execute(sql: MasterSchema.createMasterTables) }
        try migrator.migrate(queue)
        try queue.close()
        let before = try FileDigest.sha256(ofFile: path)

        for arguments in [["status"], ["log"], ["delta", "--from", "0"]] {
            #expect(try CommandRunner.run(arguments + ["--db", path]).status == 0)
        }
        #expect(try FileDigest.sha256(ofFile: path) == before)
        #expect(try MasterDatabase.open(at: path).lineage() == nil)

        let imported = try CommandRunner.run(["import", "--db", path, Fixtures.base.path])
        #expect(imported.status == 0, "\(imported.stderr)")
        let database = try MasterDatabase.open(at: path)
        #expect(try database.lineage()?.count == 36)
        #expect(try database.value("PRAGMA application_id") == Int(MasterStamp.applicationID))
        #expect(try database.value("PRAGMA journal_mode") == "wal")
        #expect(try database.dataVersion() == 1)
    }

    /// The migration that rewrites the log's type CHECK (SQLite builds a table per row for
    /// `IN (…)` in a CHECK) keeps every row, its id and the id sequence, and the CHECK still refuses.
    @Test func theLogRebuiltForItsCheckKeepsRowsIdsAndSequence() throws {
        let path = scratch.path("old-log.sqlite")
        let queue = try DatabaseQueue(path: path)
        try MasterSchema.migrator(.shipped).migrate(queue, upTo: "recordFindings")
        let written: [[String]] = [
            ["1", "INSERT", "stations", "9900101", "1", "2026-01-01T00:00:00Z", "first"],
            ["2", "DUPLICATE", "9900101", "9900102", "1", "2026-01-01T00:00:00Z", ""],
            ["5", "DELETE", "lines", "99001", "1", "2026-01-01T00:00:00Z", "last"],
        ]
        try queue.write { db in
            for row in written {
                try db.execute(sql: "INSERT INTO updates (up_id, type, table_name, key_id, user_version, update_date, memo) VALUES (?, ?, ?, ?, ?, ?, ?)",
                               arguments: StatementArguments(row))
            }
            try db.execute(sql: "UPDATE sqlite_sequence SET seq = 9 WHERE name = 'updates'")
        }
        try queue.close()

        let database = try MasterDatabase.open(at: path)
        let report = try Importer(database).importSnapshot([Fixtures.base.path])
        #expect(report.version == 2 && report.committed)
        let rows: [[String]] = try database.queue.read { db in
            try Row.fetchAll(db, sql: """
                SELECT CAST(up_id AS TEXT), type, table_name, key_id, CAST(user_version AS TEXT), update_date, COALESCE(memo, '')
                FROM updates WHERE up_id < 10 ORDER BY up_id
                """).map { row in (0..<7).map { row[$0] as String } }
        }
        #expect(rows == written)
        #expect(try database.value("SELECT MIN(up_id) FROM updates WHERE user_version = 2") == 10)
        #expect(try database.value("SELECT sql FROM sqlite_schema WHERE name = 'updates'").map { (sql: String) in sql.contains("type = 'INSERT' OR") } == true)
        #expect(throws: DatabaseError.self) {
            try database.queue.write { db in
                try db.execute(sql: "INSERT INTO updates (type, table_name, key_id, user_version, update_date) VALUES ('BOGUS', 'stations', '1', 3, 'x')")
            }
        }
    }

    // MARK: 6. Errors in the project's voice

    @Test func releaseNamesAnOutputThatIsAFileOrEmpty() throws {
        let database = try twoVersions()
        let file = scratch.path("file.txt")
        try "mine".write(toFile: file, atomically: true, encoding: .utf8)
        for (out, expected) in [(file, ReleaseError.notAFolder(file)), ("", ReleaseError.noFolderGiven)] {
            let result = try CommandRunner.run(["release", "--db", database.path, "--out", out])
            #expect(result.status == 1)
            #expect(result.stderr == expected.errorDescription! + "\n")
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "mine")
    }

    /// SQLite's "database or disk is full", forced with `max_page_count` on the connection
    /// the import uses: the error names the file, and nothing changes.
    @Test func aFullDiskIsNamedAndChangesNothing() throws {
        let database = try scratch.baseDatabase()
        let before = try database.settledSHA256()
        try database.queue.writeWithoutTransaction { db in
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count")!
            try db.execute(sql: "PRAGMA max_page_count = \(pages)")
        }
        #expect(throws: MasterDatabaseError.diskFull(database.path)) {
            try Importer(database).importSnapshot([Fixtures.ekidata2019], options: ImportOptions(allowMassClose: true))
        }
        #expect(MasterDatabaseError.diskFull(database.path).errorDescription
            == "\(database.path): the disk is full (nothing was changed; free some space and run the command again)")
        #expect(try database.settledSHA256() == before)
    }

    // MARK: 5. Text byte for byte

    @Test func textWithCarriageReturnsReachesThePhoneByteForByte() throws {
        let database = try scratch.baseDatabase()
        var batch = ChangeBatch()
        batch.put(.stations, stationRow(1120101, name: "八戸\r\n2019-01-01  INSERT stations 9", line: 11201))
        batch.put(.stations, stationRow(1120102, name: "lone\rcr", line: 11201))
        batch.put(.stations, stationRow(1120103, name: "ends\r", line: 11201))
        try Curator(database).commit(batch)
        let result = try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("release")))
        #expect(result.verification?.failures == [])
        #expect(result.verification?.passed.last == "delta, full download, app update: user records identical for versions 1…1")
        _ = try Publisher(database).buildClientDatabase(version: 1, at: scratch.path("base-1.sqlite"))
        let phone = try scratch.phone(from: scratch.path("base-1.sqlite"), name: "phone.sqlite", completions: [])
        #expect(try scratch.apply(delta: scratch.path("release/2/delta-from-1.sql.gz"), to: phone).status == 0)
        let queue = try DatabaseQueue(path: phone)
        defer { try? queue.close() }
        let names = try queue.read { try String.fetchAll($0, sql: "SELECT station_name FROM stations WHERE station_cd IN (1120101, 1120102, 1120103) ORDER BY station_cd") }
        #expect(names == ["八戸\r\n2019-01-01  INSERT stations 9", "lone\rcr", "ends\r"])
    }

    @Test func aNameCannotForgeLogLines() throws {
        let database = try scratch.baseDatabase()
        let forged = "八戸\n2019-01-01T00:00:00Z  DELETE stations 1120102\u{1B}[2J"
        let edit = try CommandRunner.run(["edit", "--db", database.path, "stations", "1120101", "station_name=\(forged)", "--memo", "two\nlines"])
        #expect(edit.status == 0, "\(edit.stderr)")
        #expect(!edit.stdout.contains("\n2019-01-01T00:00:00Z"))
        let story = try CommandRunner.run(["log", "--db", database.path, "--key", "1120101"])
        #expect(story.stdout.contains("八戸\\n2019-01-01T00:00:00Z  DELETE stations 1120102\\u{1B}[2J"))
        #expect(story.stdout.split(separator: "\n").count == 2)
        let log = try CommandRunner.run(["log", "--db", database.path, "--version", "2"])
        #expect(log.stdout.split(separator: "\n").count == 1)
        #expect(log.stdout.hasSuffix("UPDATE stations 1120101 八戸\\n2019-01-01T00:00:00Z  DELETE stations 1120102\\u{1B}[2J: station_name 八戸 → 八戸\\n2019-01-01T00:00:00Z  DELETE stations 1120102\\u{1B}[2J  (two\\nlines)\n"), "\(log.stdout)")
        // --oneline: the log's own tab separators stay tabs; the memo's newline is escaped.
        let oneline = try CommandRunner.run(["log", "--db", database.path, "--version", "2", "--oneline"])
        #expect(oneline.stdout.hasSuffix("\tUPDATE\tstations 1120101\ttwo\\nlines\n"))
        let json = try CommandRunner.run(["log", "--db", database.path, "--key", "1120101", "--json"])
        #expect(json.status == 0)
        #expect(try database.value("SELECT station_name FROM stations WHERE station_cd = 1120101") == forged)
    }

    // MARK: 7. Invalid UTF-8 on the command line

    @Test func invalidUTF8OnTheCommandLineIsRefused() throws {
        let database = try scratch.baseDatabase()
        let before = try database.settledSHA256()
        // Process passes arguments as C strings: write the bytes through a shell script.
        let script = scratch.path("edit.sh")
        let shiftJIS: [UInt8] = [0x82, 0xA0]  // あ in Shift_JIS
        try Data(Array("exec \"$1\" edit --db \"$2\" stations 1120101 station_name=".utf8) + shiftJIS + Array("\n".utf8))
            .write(to: URL(fileURLWithPath: script))
        let result = try CommandRunner.run([script, CommandRunner.executable.path, database.path], program: URL(fileURLWithPath: "/bin/sh"))
        #expect(result.status == 1)
        #expect(result.stderr == "argument 6 is not valid UTF-8 (expected UTF-8 text; convert it, e.g. with `iconv -f SHIFT_JIS -t UTF-8`)\n")
        #expect(try database.settledSHA256() == before)
    }

    // MARK: 8. Generated data never overwrites real data

    @Test func synthRefusesAFolderThatIsNotEmpty() throws {
        let folder = scratch.path("snapshot")
        try FileManager.default.copyItem(atPath: Fixtures.base.path, toPath: folder)
        let before = try snapshot(folder)
        let result = try CommandRunner.run(["synth", "--stations", "10", "--out", folder])
        #expect(result.status == 1)
        #expect(result.stderr == "\(folder): the folder is not empty (it holds company.csv, join.csv, line.csv, …); synth writes only into a new or empty folder, so choose another --out\n")
        #expect(try snapshot(folder) == before)
        #expect(try CommandRunner.run(["synth", "--stations", "10", "--out", scratch.path("new")]).status == 0)
    }
}
