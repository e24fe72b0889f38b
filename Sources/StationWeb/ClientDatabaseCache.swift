import Crypto
import Foundation
import StationSupport

/// The client database of the version the server holds, kept in the scratch folder after a sync
/// commits: the next sync builds the new release's database from it with the release's delta, as
/// a phone updates, and sends only what differs, without downloading and inflating the whole
/// database again.
///
/// A kept database is trusted only by the SHA-256 of its bytes that the sync recorded in the
/// server's `release_state` in the transaction that committed it: the next sync copies the file
/// and hashes the copy as it goes, and uses the copy only when the hash is the recorded one. So
/// whoever can write the folder (another local user, where the folder is not private) cannot put
/// a row into the master tables that no signed release holds: a changed file is not used, and
/// the whole database is downloaded and checked against the signed manifest instead.
struct ClientDatabaseCache {
    let folder: String

    private func path(_ version: Int) -> String { (folder as NSString).appendingPathComponent("kept-\(version).sqlite") }

    /// `kept-N.sqlite` copied to `destination` when its bytes hash to `sha256`; false (and no
    /// copy) when there is none or it differs.
    func copy(version: Int, sha256: String, to destination: String) -> Bool {
        guard let input = FileHandle(forReadingAtPath: path(version)) else { return false }
        defer { try? input.close() }
        try? FileManager.default.removeItem(atPath: destination)
        guard FileManager.default.createFile(atPath: destination, contents: nil, attributes: [.posixPermissions: 0o600]),
              let output = FileHandle(forWritingAtPath: destination) else { return false }
        defer { try? output.close() }
        var hasher = SHA256()
        do {
            while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
                hasher.update(data: chunk)
                try output.write(contentsOf: chunk)
            }
        } catch {
            try? FileManager.default.removeItem(atPath: destination)
            return false
        }
        guard hasher.finalize().map({ String(format: "%02x", $0) }).joined() == sha256 else {
            try? FileManager.default.removeItem(atPath: destination)
            return false
        }
        return true
    }

    /// Keeps `file` (the client database of `version`, just committed) in place of any other.
    func keep(_ file: String, version: Int) {
        let manager = FileManager.default
        for name in (try? manager.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix("kept-") || AtomicFile.isTemporaryName(name) {
            try? manager.removeItem(atPath: (folder as NSString).appendingPathComponent(name))
        }
        _ = try? manager.moveItem(atPath: file, toPath: path(version))
    }
}
