import Foundation
import GRDB
import StationCurate
import StationImport
import StationManifest
import StationRelease
import StationSchema
import StationSupport
import Testing

/// A published version never changes under phones: a master restored from a backup, or diverged
/// from what a folder published, is refused before anything in the folder changes.
@Suite struct PublishedHistoryTests {
    let scratch = Scratch()

    /// A folder of versions 1…5, each released as it was made, and copies of the master at 3 and 4.
    func publishedFolder() throws -> (master: MasterDatabase, folder: String, backups: [Int: String]) {
        let master = try scratch.baseDatabase()
        let folder = scratch.path("release")
        var backups: [Int: String] = [:]
        try release(master, folder)
        for version in 2...5 {
            try Curator(master).apply([LocatedOperation(.edit(table: .stations, key: ["1120102"], values: ["weight": "\(version)"]))])
            try release(master, folder)
            if version == 3 || version == 4 {
                _ = try master.settledSHA256()
                backups[version] = scratch.path("backup-\(version).sqlite")
                try FileManager.default.copyItem(atPath: master.path, toPath: backups[version]!)
            }
        }
        return (master, folder, backups)
    }

    /// A release whose publish the master cannot record (another writer holds it past the busy
    /// timeout) stands, and says why; the next release learns the version from the folder.
    @Test func aPublishTheMasterCannotRecordIsToldNotSwallowed() throws {
        let path = try scratch.baseDatabase().path
        let master = try MasterDatabase.open(at: path, busyTimeout: 0.2)
        let folder = scratch.path("release")
        var holding = Configuration()
        holding.allowsUnsafeTransactions = true
        let writer = try DatabaseQueue(path: path, configuration: holding)
        var options = ReleaseOptions(outputFolder: folder, verify: false)
        options.skipChecks = true
        // Once the manifest is published, another process begins a write and holds it.
        options.onStep = { step in if step == .manifestWritten { try writer.writeWithoutTransaction { try $0.execute(sql: "BEGIN IMMEDIATE") } } }
        let result = try Publisher(master).release(options)
        try writer.writeWithoutTransaction { try $0.execute(sql: "ROLLBACK") }
        #expect(result.released.version == 1 && (result.publishedNotRecorded ?? "").contains("another StationAdmin process is writing this database"), "\(result.publishedNotRecorded ?? "nil")")
        #expect(try Manifest.decode(Data(contentsOf: URL(fileURLWithPath: folder + "/manifest.json"))).newest == 1)
        // Not recorded, so the next release checks the folder's version against the master's own build, and goes on.
        try Curator(master).apply([LocatedOperation(.edit(table: .stations, key: ["1120102"], values: ["weight": "2"]))])
        var next = ReleaseOptions(outputFolder: folder, verify: false)
        next.skipChecks = true
        #expect(try Publisher(master).release(next).publishedNotRecorded == nil)
    }

    @discardableResult
    func release(_ master: MasterDatabase, _ folder: String, version: Int? = nil) throws -> ReleaseResult {
        var options = ReleaseOptions(outputFolder: folder, verify: false)
        options.skipChecks = true
        options.version = version
        return try Publisher(master).release(options)
    }

    /// A restored backup, edited once or more into versions of its own.
    func restored(_ backup: String, as name: String, edits: [String]) throws -> MasterDatabase {
        let path = scratch.path(name)
        try FileManager.default.copyItem(atPath: backup, toPath: path)
        let master = try MasterDatabase.open(at: path)
        for edit in edits {
            try Curator(master).apply([LocatedOperation(.edit(table: .stations, key: ["1120103"], values: ["station_name": edit]))])
        }
        return master
    }

    @Test func aMasterBehindTheFolderIsRefusedAndTheFolderUnchanged() throws {
        let (_, folder, backups) = try publishedFolder()
        let before = try folderFiles(folder)
        let master = try restored(backups[3]!, as: "behind.sqlite", edits: ["下田（別）"])
        #expect(throws: ReleaseError.folderAhead(folder, folderNewest: 5, masterNewest: 4)) { try release(master, folder) }
        #expect(try folderFiles(folder) == before)
    }

    @Test func aMasterDivergedAtTheNewestVersionIsRefused() throws {
        let (_, folder, backups) = try publishedFolder()
        let before = try folderFiles(folder)
        let published = try Manifest.decode(Data(contentsOf: URL(fileURLWithPath: folder + "/manifest.json")))
        let master = try restored(backups[4]!, as: "diverged.sqlite", edits: ["下田（別）"])
        #expect {
            try release(master, folder)
        } throws: { error in
            guard case let ReleaseError.publishedVersionDiffers(_, version, folderHash, _) = error else { return false }
            return version == 5 && folderHash == published.versions.last!.contentHash
                && error.localizedDescription.contains("release into a new folder (--out), or bring back the master the folder came from")
        }
        #expect(try folderFiles(folder) == before)
    }

    @Test func aMasterDivergedAtAnOlderVersionIsRefused() throws {
        let (_, folder, backups) = try publishedFolder()
        let before = try folderFiles(folder)
        // Versions 4, 5 and 6 of its own: 5 is the folder's newest, which this master never released.
        let master = try restored(backups[3]!, as: "older.sqlite", edits: ["下田1", "下田2", "下田3"])
        #expect {
            try release(master, folder)
        } throws: { error in
            guard case let ReleaseError.publishedVersionDiffers(_, version, _, _) = error else { return false }
            return version == 5
        }
        #expect(try folderFiles(folder) == before)
        // Its own history is published elsewhere.
        #expect(try release(master, scratch.path("new-folder")).released.version == 6)
    }

    @Test func theSameHistoryPublishesOnAndRebuildsItsVersions() throws {
        let (master, folder, _) = try publishedFolder()
        // A version published already is rebuilt when its content is the same.
        #expect(try release(master, folder, version: 3).released.version == 3)
        // A copy of the master that recorded no release learns the folder's newest by building it.
        _ = try master.settledSHA256()
        let copy = scratch.path("copy.sqlite")
        try FileManager.default.copyItem(atPath: master.path, toPath: copy)
        let twin = try MasterDatabase.open(at: copy)
        try DatabaseQueue(path: copy).write { try $0.execute(sql: "DELETE FROM published_versions") }
        try Curator(twin).apply([LocatedOperation(.edit(table: .stations, key: ["1120102"], values: ["weight": "9"]))])
        #expect(try release(twin, folder).released.version == 6)
        #expect(try twin.value("SELECT COUNT(*) FROM published_versions") == 1)
    }
}

/// `backup`: one committed state, checked, never over a file.
@Suite struct BackupTests {
    let scratch = Scratch()

    @Test func aBackupIsTheMasterAndNeverReplacesAFile() throws {
        let database = try scratch.baseDatabase()
        let path = scratch.path("backup.sqlite")
        let result = try database.backup(to: path)
        #expect(result.version == 1 && result.bytes > 0)
        let restored = try MasterDatabase.open(at: path)
        #expect(try restored.value("SELECT COUNT(*) FROM stations") == (try database.value("SELECT COUNT(*) FROM stations") as Int?))
        #expect(try restored.dataVersion() == 1)
        let before = try FileDigest.sha256(ofFile: path)
        #expect(throws: BackupError.exists(path)) { try database.backup(to: path) }
        #expect(try FileDigest.sha256(ofFile: path) == before)
        let printed = try CommandRunner.run(["backup", "--db", database.path, "--out", scratch.path("second.sqlite")])
        #expect(printed.status == 0 && printed.stdout.hasPrefix("Backed up version 1 to \(scratch.path("second.sqlite"))"), "\(printed.stderr)")
        let refused = try CommandRunner.run(["backup", "--db", database.path, "--out", path])
        #expect(refused.status == 1 && refused.stderr.contains("exists already"))
        // A backup into a missing folder names the folder, not the master it read.
        let nowhere = try CommandRunner.run(["backup", "--db", database.path, "--out", "backups/master.sqlite"], in: scratch.url)
        #expect(nowhere.status == 1 && nowhere.stderr.contains("backups/master.sqlite: cannot write the backup: there is no folder backups (create it with mkdir -p backups"),
                "\(nowhere.stderr)")
        // No partial file is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).filter { $0.contains("partial") }.isEmpty)
    }
}
