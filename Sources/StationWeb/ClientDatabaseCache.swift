import Foundation
import StationClient

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
        return (try? ResumableDownload.sha256(ofFile: candidate)) == sha256 ? candidate : nil
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
