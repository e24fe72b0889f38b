import Foundation
import StationManifest
import StationReleaseFolder
import StationSchema
import StationSignatures
import StationSupport

/// `resign`: the folder's manifest signed again with a new `sequence`,
/// `published_at` and `expires`, and nothing else changed: the weekly job that keeps phones from
/// taking a frozen mirror for the newest release.
///
/// A signature says "the publisher made this", so before signing, the folder is checked to be what
/// was signed last time: its current manifest signed by a trusted key (the signing keys' own
/// public halves, and any `trust` adds, e.g. the key being rotated out), every file it lists
/// hashed against it, nothing it does not list, and with a master, every entry as the master
/// recorded publishing it. Any difference refuses, naming the file, and nothing is signed.
public enum ManifestResigning {
    /// Resigns the manifest of `folder` (under its lock); returns the manifest published.
    ///
    /// - Parameters:
    ///   - trust: keys besides the signing keys' own whose signature of the current manifest is accepted.
    ///   - master: the master whose published history the folder must match, when given.
    /// - Throws: `ReleaseError.currentSignatureRefused`, `.manifest(.disagrees)` (a file changed,
    ///   added or missing), `.notWhatTheMasterPublished`; nothing is signed then.
    @discardableResult
    public static func resign(folder path: String, signing: ManifestSigning, trust: [TrustedKey] = [], master: MasterDatabase? = nil,
                              lockTimeout: TimeInterval = 600) throws -> Manifest {
        try sign(folder: path, signing: signing, lockTimeout: lockTimeout) { existing, folder in
            if !folder.isSigned && master == nil {
                throw ReleaseError.currentSignatureRefused(folder.filePath(Manifest.fileName), reason:
                    "the folder's manifest is not signed: sign it the first time with --db MASTER, against what that master recorded publishing")
            }
            if folder.isSigned {
                try requireSignedByATrustedKey(existing, folder: folder, trust: signing.keys.map(\.publicKey) + trust)
            }
            guard let master else { return }
            try master.read { try MasterSchemaObjects.refuseUnexpected($0, master.declared, path: master.path) }
            try folder.requireLineage(try master.lineage() ?? "", of: existing.manifest)
            let recorded = try master.read(PublishedHistory.recordedEntries)
            var problems = PublishedHistory.disagreements(of: existing.manifest, with: recorded)
            if !folder.isSigned {
                // Signed for the first time: every version must be one the master recorded.
                problems += existing.manifest.versions.filter { recorded[$0.version] == nil }.map {
                    ManifestProblem(field: "versions[\($0.version)]", file: nil,
                                    reason: "the master has no record of publishing it (released before records, or by another copy); release into a new folder")
                }
            }
            if !problems.isEmpty { throw ReleaseError.notWhatTheMasterPublished(folder.path, problems) }
        }
    }

    /// Signs the folder's manifest as it is, checking nothing but the folder's own agreement with
    /// its manifest's sizes: for the conformance kit and the tests, whose hostile releases are
    /// signed on purpose. Never what a curator runs.
    @discardableResult
    package static func signAsIs(folder path: String, signing: ManifestSigning, lockTimeout: TimeInterval = 600) throws -> Manifest {
        try sign(folder: path, signing: signing, lockTimeout: lockTimeout, depth: .sizes) { _, _ in }
    }

    private static func sign(folder path: String, signing: ManifestSigning, lockTimeout: TimeInterval, depth: ManifestAudit.Depth = .hashes,
                             checking check: (ManifestFile, ReleaseFolder) throws -> Void) throws -> Manifest {
        let folder = try ReleaseFolder.prepare(path)
        let lock = try ReleaseFolderLock.acquire(folder, exclusive: true, timeout: lockTimeout, onWait: nil)
        defer { withExtendedLifetime(lock) {} }
        try folder.completeInterruptedPublish()
        try folder.removeLeftovers()
        // Every file hashed: a file's bytes changed under an unchanged entry is found here.
        guard let existing = try folder.manifestFileIfPresent(depth: { _ in depth }) else {
            throw ReleaseError.missingManifest(folder.filePath(Manifest.fileName))
        }
        try check(existing, folder)
        let manifest = signing.stamped(existing.manifest, after: existing.manifest)
        let building = "\(ReleaseLayout.buildingPrefix)\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try ReleaseError.translating(folder.path) {
            try FileManager.default.createDirectory(atPath: folder.filePath(building), withIntermediateDirectories: false)
        }
        try folder.publish(version: manifest.newest, from: building, manifest: manifest, extending: existing, signing: signing) { _ in }
        return manifest
    }

    /// Refuses a current manifest that no key of `trust` signed, whenever it expires: an expired
    /// manifest is what `resign` renews, a changed or unsigned one is what it must never sign.
    private static func requireSignedByATrustedKey(_ existing: ManifestFile, folder: ReleaseFolder, trust: [TrustedKey]) throws {
        let signatures = FileManager.default.contents(atPath: folder.signaturesPath)
        do {
            _ = try ManifestTrust(keys: trust, dataset: existing.manifest.dataset).check(manifest: existing.bytes, signatures: signatures, now: .distantPast)
        } catch {
            throw ReleaseError.currentSignatureRefused(folder.filePath(Manifest.fileName), reason: error.localizedDescription)
        }
    }
}
