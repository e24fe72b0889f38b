import Foundation
import StationManifest

/// Reading a release folder from outside the curator's release (`serve`).
public enum ReleaseFolderReader {
    /// A manifest's bytes, decoded and checked against its folder by `ManifestAudit` to the
    /// sizes: a server hashes each file before it first serves it, which covers its contents.
    ///
    /// - Throws: `ManifestError.corrupt` or `.disagrees`.
    public static func checkedManifest(_ data: Data, folder path: String) throws -> Manifest {
        let manifestPath = (path as NSString).appendingPathComponent(Manifest.fileName)
        let manifest: Manifest
        do {
            manifest = try Manifest.decode(data)
        } catch {
            throw ManifestError.corrupt(manifestPath, reason: error.localizedDescription)
        }
        try ManifestAudit(folder: path, depth: { _ in .sizes }).requireAgreement(manifest)
        return manifest
    }
}
