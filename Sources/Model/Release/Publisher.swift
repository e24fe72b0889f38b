import Foundation
import GRDB
import StationCheck
import StationDelta
import StationManifest
import StationReleaseFolder
import StationSchema
import StationSupport
import Synchronization

/// Builds, publishes and verifies a master's release folder: the client database, the deltas, the
/// carry-over script and the signed manifest.
///
/// A capability over the thin `MasterDatabase` handle, as GRDB's `DatabaseMigrator` takes a
/// writer: `try Publisher(master).…`.
public struct Publisher: Sendable {
    /// The master it releases.
    public let master: MasterDatabase

    /// A publisher of `master`'s releases.
    public init(_ master: MasterDatabase) {
        self.master = master
    }
}

extension Publisher {
    /// Builds the client database of a version and the delta from every older client version
    /// that can use one, verifies them, and adds them to the release folder.
    ///
    /// Clients are versions 1 to V − 1 (version 0 is a new install: it downloads the
    /// database). A delta whose gzip would be larger than the database's gzip is not published;
    /// `ReleasedVersion.downloads` tells each older version which file it gets.
    ///
    /// Safe under concurrency and interruption:
    /// - everything is read from one state of the master (one read transaction), so an
    ///   import committing meanwhile is simply not seen;
    /// - the folder is locked for the whole release (`ReleaseFolderLock`); a second release
    ///   into it waits, and a folder of another master (lineage) is refused;
    /// - the version is built in a build folder and published by a journaled sequence of
    ///   renames, manifest last (`ReleaseFolder.publish`): a release killed at any point leaves
    ///   a folder that the next release completes and cleans.
    ///
    /// - Throws: `ReleaseError` (no such version, a corrupt or foreign folder, a failed
    ///   verification); the folder is unchanged then.
    @discardableResult
    public func release(_ options: ReleaseOptions = ReleaseOptions()) throws -> ReleaseResult {
        let folderExisted = FileManager.default.fileExists(atPath: options.outputFolder)
        do {
            return try releaseLocked(options)
        } catch {
            // A refused release leaves no folder it made (one holding only its lock file).
            if !folderExisted { ReleaseFolder(path: options.outputFolder).removeIfOnlyItsLock() }
            throw error
        }
    }

    private func releaseLocked(_ options: ReleaseOptions) throws -> ReleaseResult {
        defer { Progress.finish() }
        var phases = PhaseLog()
        let locked = try lockReleaseFolder(options)
        defer { withExtendedLifetime(locked.lock) {} }
        defer { _ = try? locked.published.manifest.wait() }
        phases.done("release folder locked")
        let step: (ReleaseStep) throws -> Void = { try options.onStep?($0) }
        let folder = locked.published.folder
        let building = "\(ReleaseLayout.buildingPrefix)\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let buildFolder = ReleaseFolder(path: folder.filePath(building))
        var publishDecided = false
        defer { if !publishDecided { try? FileManager.default.removeItem(atPath: buildFolder.path) } }
        let (released, checks) = try ReleaseError.translating(folder.path) {
            try ReleaseBuild(master: master, requested: options.version, building: buildFolder, published: locked.published,
                             spacing: options.checkpointSpacing, checks: options.skipChecks ? nil : options.checkLimits, step: step).run()
        }
        let existingFile = try locked.published.manifest.wait()
        try requirePublishedHistory(existingFile?.manifest, folder: folder.path, released: released, newest: try master.dataVersion(), scratch: buildFolder.path)
        let verification = try verifyBuild(released, in: buildFolder, older: existingFile?.manifest, folder: folder, if: options.verify)
        try step(.verified)
        phases = PhaseLog()
        let manifest = Self.manifest(adding: released, to: existingFile?.manifest, lineage: locked.lineage, signing: options.signing)
        try folder.publish(version: released.version, from: building, manifest: manifest, extending: existingFile,
                           signing: options.signing) { done in
            // From the intent on, the build folder is the publish's to finish, not ours to remove.
            if done == .intentWritten { publishDecided = true }
            try step(done)
        }
        // The published folder keeps the manifest's contract. No hash is read again: the new
        // files' were computed from the bytes as they were written. The older versions' files
        // were checked when the manifest was loaded, under the lock this release still holds,
        // and a publish touches only its own version's folder: their entries are checked, not
        // their files again.
        try folder.requireAgreement(manifest, depth: { $0 == released.version ? .contents : .listed })
        let unrecorded = recordPublished(released)
        phases.done("published, and the folder checked again")
        return ReleaseResult(
            released: released, manifest: manifest, verification: verification, checks: checks,
            completedInterruptedVersion: locked.completedInterruptedVersion, removedLeftovers: locked.removedLeftovers,
            publishedNotRecorded: unrecorded)
    }

    /// A release folder prepared and locked for this master, with what the lock found to finish
    /// or remove, and its manifest being read beside the build.
    private struct LockedReleaseFolder {
        let lock: ReleaseFolderLock?
        let lineage: String
        let published: PublishedReleases
        let completedInterruptedVersion: Int?
        let removedLeftovers: [String]
    }

    /// The release's first step: the master checked for damage (a damaged one publishes nothing
    /// and leaves no folder), the folder made or checked as this lineage's, locked, a killed
    /// release's publish completed and its leftovers removed.
    private func lockReleaseFolder(_ options: ReleaseOptions) throws -> LockedReleaseFolder {
        try master.read { db in
            try MasterSchemaObjects.refuseUnexpected(db, master.declared, path: master.path)
            try MasterDatabase.refuseDamage(db, path: master.path)
        }
        let folder = try ReleaseFolder.prepare(options.outputFolder)
        try master.stampIfNeeded()
        guard let lineage = try master.lineage() else { throw ReleaseError.masterWithoutLineage(master.path) }
        // Someone else's folder is refused before the lock file is made in it; again below, once
        // locked, for what may have come meanwhile.
        try folder.refuseStrangersInANewFolder()
        let lock = try ReleaseFolderLock.acquire(folder, exclusive: true, timeout: options.lockTimeout, onWait: options.onWait)
        let completed = try folder.completeInterruptedPublish()
        let leftovers = try folder.removeLeftovers()
        try folder.refuseStrangersInANewFolder()
        if options.signing == nil && folder.isSigned { throw ReleaseError.signingRequired(folder.signaturesPath) }
        // The manifest is read and checked beside the start of the build, which needs it only for
        // the deltas (a long history's manifest is megabytes of JSON listing thousands of files).
        // Sizes only, so that a release does not slow down as the folder grows: an older file is
        // hashed when it is read (a delta this release joins); `verify` reads every file.
        let published = PublishedReleases(folder: folder, manifest: BackgroundTask {
            let existing = try folder.manifestFileIfPresent(depth: { _ in .sizes })
            try folder.requireLineage(lineage, of: existing?.manifest)
            return existing
        })
        return LockedReleaseFolder(lock: lock, lineage: lineage, published: published, completedInterruptedVersion: completed,
                                   removedLeftovers: leftovers)
    }

    /// The build verified on the real `sqlite3` (`ReleaseVerifier`) when asked; nil when not.
    /// - Throws: `ReleaseError.verificationFailed` naming every failure.
    private func verifyBuild(_ released: ReleasedVersion, in buildFolder: ReleaseFolder, older: Manifest?, folder: ReleaseFolder,
                             if verify: Bool) throws -> VerificationReport? {
        guard verify else { return nil }
        let verifier = ReleaseVerifier(folder: buildFolder, master: master, scratch: buildFolder.filePath("verify"))
        let verification = try verifier.verify(released, olderDatabases: older.map { (folder, $0) })
        if !verification.failures.isEmpty { throw ReleaseError.verificationFailed(verification.failures) }
        return verification
    }

    /// The folder's manifest with `released` in it (replacing a version of that number), of this
    /// code's format: what this release adds (a joined delta's `sql_parts`, say) is that format's,
    /// and `ManifestAudit` refuses a format newer than its code reads. Signed when asked.
    private static func manifest(adding released: ReleasedVersion, to existing: Manifest?, lineage: String,
                                 signing: ManifestSigning?) -> Manifest {
        var manifest = existing ?? Manifest(lineage: lineage, newest: released.version, versions: [])
        manifest.lineage = lineage
        manifest.format = Manifest.currentFormat
        manifest.versions.removeAll { $0.version == released.version }
        manifest.versions.append(released)
        manifest.versions.sort { $0.version < $1.version }
        manifest.newest = manifest.versions.last!.version
        if let signing { manifest = signing.stamped(manifest, after: existing) }
        return manifest
    }
}
