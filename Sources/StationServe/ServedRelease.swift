import Foundation
import StationManifest
import StationReleaseFolder
import StationSupport
import Synchronization

/// The release folder as `serve` answers from it: the manifest last published, read again
/// as soon as a release replaces it, so that a new release is served without a restart.
///
/// A manifest is taken only once `ManifestAudit` (without hashing) accepts it against the
/// folder; until then the previous one is served. Files are opened by the responder at the
/// start of a request, so a request that began before a publish finishes with its own files.
final class ServedRelease: Sendable {
    /// One published state: the manifest, its bytes as served, and its ETag.
    struct Snapshot: Sendable {
        let manifest: Manifest
        let bytes: Data
        let sha256: String
        /// What identifies the manifest file on disk: a new release renames a new file in.
        let identity: FileIdentity
    }

    let folder: String
    private let snapshot: Mutex<Snapshot?> = Mutex(nil)
    /// Told when a published manifest is refused (the previous one stays served).
    let onProblem: @Sendable (String) -> Void

    init(folder: String, onProblem: @escaping @Sendable (String) -> Void) {
        self.folder = folder
        self.onProblem = onProblem
    }

    var manifestPath: String { (folder as NSString).appendingPathComponent(Manifest.fileName) }

    func path(of relative: String) -> String { (folder as NSString).appendingPathComponent(relative) }

    /// The current snapshot, read again if the manifest file changed since; nil while the
    /// folder has no manifest that passes the audit.
    func current() -> Snapshot? {
        let identity = FileIdentity(path: manifestPath)
        if let held = snapshot.withLock({ $0 }), held.identity == identity { return held }
        guard let identity, let loaded = load(identity) else { return snapshot.withLock { $0 } }
        snapshot.withLock { $0 = loaded }
        return loaded
    }

    private func load(_ identity: FileIdentity) -> Snapshot? {
        do {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: manifestPath))
            let manifest = try ReleaseFolderReader.checkedManifest(bytes, folder: folder)
            // The file may have been replaced while it was read: take it only if it is the same.
            guard FileIdentity(path: manifestPath) == identity else { return nil }
            return Snapshot(manifest: manifest, bytes: bytes, sha256: FileDigest.sha256(bytes), identity: identity)
        } catch {
            onProblem("\(manifestPath): not served, the previous manifest stays: \(ErrorText.describe(error))")
            return nil
        }
    }
}
