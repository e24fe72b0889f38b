import Foundation

/// Reading a release folder from outside the curator's release (`serve`).
public enum ReleaseFolderReader {
    /// A manifest's bytes, decoded and checked against its folder by `ManifestAudit`, sizes but
    /// not hashes (the files are the ones `release` hashed as it wrote them).
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
        try ManifestAudit(folder: path, depth: { _ in .contents }).requireAgreement(manifest)
        return manifest
    }
}
