import Foundation
import StationManifest
import StationSignatures
import StationSupport

/// `resign`: the folder's manifest signed again with a new `sequence`,
/// `published_at` and `expires`, and nothing else changed: the weekly job that keeps phones from
/// taking a frozen mirror for the newest release.
public enum ManifestResigning {
    /// Resigns the manifest of `folder` (under its lock); returns the manifest published.
    @discardableResult
    public static func resign(folder path: String, signing: ManifestSigning, lockTimeout: TimeInterval = 600) throws -> Manifest {
        let folder = try ReleaseFolder.prepare(path)
        let lock = try ReleaseFolderLock.acquire(folder, exclusive: true, timeout: lockTimeout, onWait: nil)
        defer { withExtendedLifetime(lock) {} }
        try folder.completeInterruptedPublish()
        try folder.removeLeftovers()
        guard let existing = try folder.manifestFileIfPresent(depth: { _ in .sizes }) else {
            throw ReleaseError.missingManifest(folder.filePath(Manifest.fileName))
        }
        let manifest = signing.stamped(existing.manifest, after: existing.manifest)
        let building = "\(ReleaseLayout.buildingPrefix)\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try ReleaseError.translating(folder.path) {
            try FileManager.default.createDirectory(atPath: folder.filePath(building), withIntermediateDirectories: false)
        }
        try folder.publish(version: manifest.newest, from: building, manifest: manifest, extending: existing, signing: signing) { _ in }
        return manifest
    }
}
