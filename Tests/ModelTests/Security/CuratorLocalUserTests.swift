import Foundation
import StationRelease
import StationSignatures
import StationSupport
import Testing

/// Another local user on the curator's machine: a release folder's `.lock` planted as a link (to
/// the master, the signing key, a missing path), a lock file or a release folder another user
/// owns. Each command refuses, naming the path, and the link's target keeps every byte.
@Suite(.serialized) struct CuratorLocalUserTests {
    let scratch = Scratch()

    /// A master at version 1 released into `release/`, and a signing key.
    private func released() throws -> (master: String, folder: String, key: SigningKey) {
        let database = try scratch.baseDatabase()
        let key = try SigningKey.generate(to: scratch.path("curator-key"))
        var options = ReleaseOptions(outputFolder: scratch.path("release"), verify: false)
        options.signing = ManifestSigning(keys: [key])
        try Publisher(database).release(options)
        return (database.path, scratch.path("release"), key)
    }

    private func plantLock(in folder: String, pointingAt target: String) throws {
        let lock = folder + "/.lock"
        try? FileManager.default.removeItem(atPath: lock)
        try FileManager.default.createSymbolicLink(atPath: lock, withDestinationPath: target)
    }

    private func expectRefused(_ arguments: [String], naming path: String, _ reason: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try CommandRunner.run(arguments)
        #expect(result.status == 1, "\(arguments.prefix(1)): exit \(result.status) \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains("\(path): \(reason)"), "\(arguments.prefix(1)): \(result.stderr)", sourceLocation: sourceLocation)
    }

    @Test func aLockLinkedToTheMasterLeavesItWhole() throws {
        let (master, folder, key) = try released()
        let before = try FileDigest.sha256(ofFile: master)
        try plantLock(in: folder, pointingAt: master)
        try expectRefused(["release", "--out", folder, "--db", master, "--sign", key.path], naming: folder + "/.lock", "is a link")
        #expect(try FileDigest.sha256(ofFile: master) == before)
        #expect(try CommandRunner.run(["status", "--db", master]).status == 0)
    }

    @Test func aLockLinkedToTheSigningKeyLeavesItWhole() throws {
        let (_, folder, key) = try released()
        let before = try FileDigest.sha256(ofFile: key.path)
        try plantLock(in: folder, pointingAt: key.path)
        try expectRefused(["resign", "--out", folder, "--sign", key.path], naming: folder + "/.lock", "is a link")
        #expect(try FileDigest.sha256(ofFile: key.path) == before)
    }

    @Test func aLockLinkedToAMissingPathIsNotCreated() throws {
        let (master, folder, _) = try released()
        let missing = scratch.path("made-by-the-lock")
        try plantLock(in: folder, pointingAt: missing)
        try expectRefused(["verify", "--out", folder, "--db", master], naming: folder + "/.lock", "is a link")
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test func aLockOrAFolderAnotherUserOwnsIsRefused() throws {
        let (master, folder, key) = try released()
        let lock = folder + "/.lock"
        #expect(chown(lock, 65534, 65534) == 0)
        try expectRefused(["release", "--out", folder, "--db", master, "--sign", key.path], naming: lock, "belongs to another user (uid 65534")
        #expect(chown(lock, getuid(), getgid()) == 0 && chmod(lock, 0o666) == 0)
        try expectRefused(["resign", "--out", folder, "--sign", key.path], naming: lock, "can be written by others")
        #expect(chmod(lock, 0o644) == 0 && chown(folder, 65534, 65534) == 0)
        try expectRefused(["release", "--out", folder, "--db", master, "--sign", key.path], naming: folder, "belongs to another user (uid 65534")
        #expect(chown(folder, getuid(), getgid()) == 0)
        #expect(try CommandRunner.run(["resign", "--out", folder, "--sign", key.path]).status == 0, "once the folder and lock are the curator's own again")
    }
}
