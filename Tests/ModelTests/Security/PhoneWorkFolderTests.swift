import Foundation
import GRDB
import StationClient
import StationManifest
import StationSignatures
import StationSupport
import Testing

/// Another local user on a machine running an updater, and a bundled file from elsewhere: the
/// phone's lock and work folder are never used through a link nor when another user owns them,
/// a forged file renamed in after the download's check is never installed, and a bundled file
/// whose bytes are not the manifest's runs nothing. Each case ends refused with the path named
/// and the app's database as it was.
@Suite(.serialized) struct PhoneWorkFolderTests {
    let scratch = Scratch()

    private func updater(_ phone: Phone, _ folder: ClientFolder, onStep: @escaping @Sendable (UpdateStep) -> Void = { _ in }) throws -> StationUpdater {
        var configuration = StationUpdater.Configuration(source: FolderReleaseSource(folder: folder.url), keys: [try folder.trustedKey], partBytes: 4096)
        configuration.onStep = onStep
        return StationUpdater(database: phone.url, configuration: configuration)
    }

    /// Runs `sql` on `path` through an ordinary connection (no defences): what a forger does.
    private static func execute(_ sql: String, on path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { try $0.execute(sql: sql) }
        try queue.close()
    }

    /// A root-only file outside, which a link planted in the phone's folder points at.
    private func rootOnlyFile() throws -> (path: String, sha256: String) {
        let path = scratch.path("root-only.txt")
        try Data("a file only root may write\n".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        return (path, try FileDigest.sha256(ofFile: path))
    }

    private func expectRefused(_ phone: Phone, _ updater: StationUpdater, naming path: String, _ reason: String,
                               sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let before = try phone.contentBesideTrustRecord()
        await #expect(sourceLocation: sourceLocation) {
            try await updater.update()
        } throws: { error in
            guard case let StationClientError.unsafeFile(refused, why) = error else { return false }
            return refused == path && why.contains(reason)
        }
        #expect(try phone.contentBesideTrustRecord() == before, "the database changed", sourceLocation: sourceLocation)
        #expect(try phone.state() == "old", sourceLocation: sourceLocation)
    }

    @Test func aLockPlantedAsALinkIsRefusedAndItsTargetUntouched() async throws {
        let folder = try ClientFolder(scratch)
        let phone = try Phone(folder, at: 1, in: scratch)
        let target = try rootOnlyFile()
        try FileManager.default.createSymbolicLink(atPath: phone.path + ".lock", withDestinationPath: target.path)
        try await expectRefused(phone, try updater(phone, folder), naming: phone.path + ".lock", "is a link")
        #expect(try FileDigest.sha256(ofFile: target.path) == target.sha256)
    }

    @Test func aWorkFolderAnotherUserOwnsOrOthersCanWriteIsRefused() async throws {
        let folder = try ClientFolder(scratch)
        for (case_, prepare) in [("another user's", { (path: String) in chown(path, 65534, 65534) }),
                                 ("writable by others", { (path: String) in chmod(path, 0o777) })] as [(String, (String) -> Int32)] {
            let phone = try Phone(folder, at: 4, in: scratch)
            let work = phone.path + ".update"
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false)
            #expect(prepare(work) == 0, "\(case_)")
            try await expectRefused(phone, try updater(phone, folder), naming: work, case_ == "another user's" ? "belongs to another user (uid 65534" : "can be written by others")
            #expect(try FileManager.default.contentsOfDirectory(atPath: work).isEmpty, "\(case_): something was written into it")
        }
    }

    @Test func aWorkFolderThatIsALinkIsRefused() async throws {
        let folder = try ClientFolder(scratch)
        let phone = try Phone(folder, at: 4, in: scratch)
        let elsewhere = scratch.path("elsewhere")
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: phone.path + ".update", withDestinationPath: elsewhere)
        try await expectRefused(phone, try updater(phone, folder), naming: phone.path + ".update", "is a link")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }

    /// A part file planted as a link to a file outside: the download is refused, the file kept.
    @Test func aPartFilePlantedAsALinkIsNeverWrittenThrough() async throws {
        let folder = try ClientFolder(scratch)
        let phone = try Phone(folder, at: 4, in: scratch)
        let target = try rootOnlyFile()
        let work = phone.path + ".update"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let part = work + "/stations.sqlite.gz.part"
        try FileManager.default.createSymbolicLink(atPath: part, withDestinationPath: target.path)
        try await expectRefused(phone, try updater(phone, folder), naming: part, "is a link")
        #expect(try FileDigest.sha256(ofFile: target.path) == target.sha256)
    }

    /// A racer that renames a forged database onto `incoming.sqlite` while it is being inflated
    /// (after its bytes are hashed as they are written, before the install attaches the path):
    /// the install hashes the tables it installed and rolls back. Deterministic: the swap happens
    /// at the inflate's first progress step.
    @Test func aForgedDatabaseRenamedInAfterTheCheckIsNeverInstalled() async throws {
        let folder = try ClientFolder(scratch)
        let phone = try Phone(folder, at: 4, in: scratch)
        let forged = scratch.path("forged.sqlite")
        try FileManager.default.copyItem(atPath: folder.newest + "/stations.sqlite", toPath: forged)
        try Self.execute("UPDATE stations SET station_name = 'forged' WHERE rowid = (SELECT min(rowid) FROM stations)", on: forged)
        let incoming = phone.path + ".update/incoming.sqlite"
        let swapped = Locked(false)
        let updater = try updater(phone, folder) { step in
            guard step == .inflating, !swapped.withLock({ $0 }) else { return }
            let staged = incoming + ".forged"
            try? FileManager.default.copyItem(atPath: forged, toPath: staged)
            rename(staged, incoming)
            swapped.withLock { $0 = true }
        }
        let before = try phone.contentBesideTrustRecord()
        await #expect {
            try await updater.update()
        } throws: { error in
            guard case let StationClientError.contentDiffers(version, expected, actual) = error else { return false }
            return version == 5 && expected != actual
        }
        #expect(swapped.withLock { $0 }, "the inflate never reached a progress step: the fixture's database is too small")
        #expect(try phone.contentBesideTrustRecord() == before)
        #expect(try phone.state() == "old")
        // With no racer, the same update lands.
        _ = try await self.updater(phone, folder).update()
        #expect(try phone.state() == "new")
    }

    /// A bundled database of the manifest's size whose schema text was rewritten to drop the
    /// app's table: refused by its SHA-256 before SQLite opens it; the app's table is there.
    @Test func aBundledFileWithCraftedSchemaTextRunsNothing() async throws {
        let folder = try ClientFolder(scratch)
        let phone = try Phone(folder, at: 2, in: scratch)
        let crafted = scratch.path("crafted.sqlite")
        try FileManager.default.copyItem(atPath: folder.newest + "/stations.sqlite", toPath: crafted)
        let size = try #require(FileChecks.size(crafted))
        try Self.execute("""
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET sql = sql || '; DROP TABLE main.visits' WHERE type = 'index' AND name = 'stations_by_group';
            PRAGMA writable_schema = OFF;
            """, on: crafted)
        #expect(FileChecks.size(crafted) == size, "the crafted file keeps the manifest's size")
        let bundle = BundledRelease(database: URL(fileURLWithPath: crafted), manifest: URL(fileURLWithPath: folder.path + "/manifest.json"))
        let before = try FileDigest.sha256(ofFile: phone.path)
        await #expect {
            try await updater(phone, folder).installBundled(bundle)
        } throws: { error in
            guard case let StationClientError.hashDiffers(path) = error else { return false }
            return path == crafted
        }
        #expect(try FileDigest.sha256(ofFile: phone.path) == before)
        #expect(try phone.state() == "old")
        // The honest bundle installs, and its tables' statements were made, not read: the app's table is there.
        #expect(try await updater(phone, folder).installBundled(folder.bundle))
        #expect(try phone.state() == "new")
    }
}
