import Crypto
import Foundation

/// The client database of the version the server holds, kept in the scratch folder after a sync
/// commits: the next sync compares the new release with it (sending only what differs) without
/// downloading and inflating it again. Trusted only while its SHA-256 is the one `release_state`
/// records; anything else in the folder is ignored and replaced.
struct ClientDatabaseCache {
    let folder: String

    private func path(_ version: Int) -> String { (folder as NSString).appendingPathComponent("kept-\(version).sqlite") }

    /// The kept database of `version`, when its bytes hash to `sha256`.
    func kept(version: Int, sha256: String) -> String? {
        let candidate = path(version)
        guard let handle = FileHandle(forReadingAtPath: candidate) else { return nil }
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try? handle.read(upToCount: 4 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
        let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        return digest == sha256 ? candidate : nil
    }

    /// Keeps `file` (the client database of `version`, just committed) in place of any other.
    func keep(_ file: String, version: Int) {
        let manager = FileManager.default
        for name in (try? manager.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix("kept-") {
            try? manager.removeItem(atPath: (folder as NSString).appendingPathComponent(name))
        }
        try? manager.moveItem(atPath: file, toPath: path(version))
    }
}
