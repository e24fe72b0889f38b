import Foundation
import StationClientCore
import StationSupport

/// The client database of the version the server holds, kept in the scratch folder after a sync
/// commits: the next sync builds the new release's database from it with the release's delta, as
/// a phone updates, and sends only what differs, without downloading and inflating the whole
/// database again.
///
/// A kept database is trusted by the record written beside it once it was on disk
/// (`kept-N.json`): the SHA-256 of the release database whose content it has, and the file's
/// `FileIdentity` (device, inode, size, change time) as it was then. A file written, replaced or
/// touched since is not trusted, and the database is downloaded. Hashing the file instead would
/// read all of it on every run, to prove what this process wrote itself; and a database a delta
/// made never has the release file's bytes, only its content.
/// A file without a record (kept by an older StationAdmin) is trusted when its bytes hash to the
/// release's.
struct ClientDatabaseCache {
    let folder: String

    private struct Record: Codable, Equatable {
        var version: Int
        var databaseSHA256: String
        var file: FileIdentity
    }

    private func path(_ version: Int) -> String { (folder as NSString).appendingPathComponent("kept-\(version).sqlite") }
    private func recordPath(_ version: Int) -> String { (folder as NSString).appendingPathComponent("kept-\(version).json") }

    /// The kept database of `version`, when it has the content of the release database whose
    /// SHA-256 is `sha256`.
    func kept(version: Int, sha256: String) -> String? {
        let candidate = path(version)
        guard let identity = FileIdentity(path: candidate) else { return nil }
        if let data = FileManager.default.contents(atPath: recordPath(version)) {
            let record = try? JSONDecoder().decode(Record.self, from: data)
            return record == Record(version: version, databaseSHA256: sha256, file: identity) ? candidate : nil
        }
        return (try? ResumableDownload.sha256(ofFile: candidate)) == sha256 ? candidate : nil
    }

    /// Keeps `file` (the client database of `version`, with the content of the release database
    /// whose SHA-256 is `databaseSHA256`, just committed) in place of any other: on disk before
    /// its record is written, so that a record never vouches for a file a power loss tore.
    func keep(_ file: String, version: Int, databaseSHA256: String) {
        let manager = FileManager.default
        for name in (try? manager.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix("kept-") || AtomicFile.isTemporaryName(name) {
            try? manager.removeItem(atPath: (folder as NSString).appendingPathComponent(name))
        }
        let kept = path(version)
        guard (try? manager.moveItem(atPath: file, toPath: kept)) != nil, Self.flush(kept), Self.flush(folder),
              let identity = FileIdentity(path: kept),
              let record = try? JSONEncoder().encode(Record(version: version, databaseSHA256: databaseSHA256, file: identity)) else { return }
        // A record torn by a power loss does not decode, and vouches for nothing.
        try? AtomicFile.write(record, to: recordPath(version))
    }

    private static func flush(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return fsync(descriptor) == 0
    }
}
