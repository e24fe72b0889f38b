import Foundation

/// A release folder on disk: `manifest.json` and one folder per built version.
struct ReleaseFolder {
    let path: String

    var manifestPath: String { (path as NSString).appendingPathComponent(Manifest.fileName) }

    func url(_ relative: String) -> String { (path as NSString).appendingPathComponent(relative) }

    /// The manifest, checked against the files it names (sizes and SHA-256).
    /// - Throws: `ReleaseError` when the folder or manifest is missing, corrupt or disagrees.
    func loadManifest() throws -> Manifest {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ReleaseError.missingFolder(path)
        }
        guard let data = FileManager.default.contents(atPath: manifestPath) else { throw ReleaseError.missingManifest(path) }
        let manifest: Manifest
        do {
            manifest = try Manifest.decode(data)
        } catch {
            throw ReleaseError.corruptManifest(manifestPath, reason: Self.describe(error))
        }
        for version in manifest.versions {
            for file in [version.database, version.databaseGzip] + version.deltas.map(\.file) {
                try check(file)
            }
        }
        return manifest
    }

    /// The manifest if there is one (checked), nil for a new folder.
    func loadManifestIfPresent() throws -> Manifest? {
        FileManager.default.fileExists(atPath: manifestPath) ? try loadManifest() : nil
    }

    func check(_ file: ReleasedFile) throws {
        let full = url(file.path)
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: full) else {
            throw ReleaseError.manifestDisagrees(manifestPath, file: file.path, reason: "the file is missing")
        }
        let size = (attributes[.size] as? NSNumber)?.intValue ?? -1
        guard size == file.bytes else {
            throw ReleaseError.manifestDisagrees(manifestPath, file: file.path, reason: "\(size) bytes, the manifest says \(file.bytes)")
        }
        let digest = try FileDigest.sha256(ofFile: full)
        guard digest == file.sha256 else {
            throw ReleaseError.manifestDisagrees(manifestPath, file: file.path, reason: "sha256 \(digest), the manifest says \(file.sha256)")
        }
    }

    private static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "missing \(key.stringValue) at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "\(context.debugDescription) at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.dataCorrupted(let context):
            return "not JSON: \(context.underlyingError.map { "\($0.localizedDescription)" } ?? context.debugDescription)"
        default:
            return error.localizedDescription
        }
    }
}
