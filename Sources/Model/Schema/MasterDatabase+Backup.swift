import Foundation
import GRDB
import StationSQLite

/// A backup the master refuses to write.
public enum BackupError: Error, LocalizedError, Equatable {
    /// Something is at the path already: a backup never replaces a file.
    case exists(String)
    /// The folder the backup would go in does not exist (the backup, not the master, cannot be written).
    case noFolder(path: String, folder: String)

    public var errorDescription: String? {
        switch self {
        case let .exists(path):
            return "\(path): exists already (a backup never replaces a file; choose another --out, or move that one away)"
        case let .noFolder(path, folder):
            return "\(path): cannot write the backup: there is no folder \(folder) (create it with mkdir -p \(folder), or choose another --out)"
        }
    }
}

/// What `backup(to:)` wrote.
public struct BackupResult: Sendable, Equatable {
    /// The backup's path.
    public let path: String
    /// The data version it holds.
    public let version: Int
    /// Its size in bytes.
    public let bytes: Int
}

extension MasterDatabase {
    /// Copies the master to `path` while other commands go on: SQLite's online backup, from one
    /// read transaction, so the copy is one committed state; then checked with SQLite's
    /// integrity check, and put in place by a link that fails rather than replace a file.
    ///
    /// A restored backup is a master like any other, except that a release folder may have
    /// published versions after it: a release from it is refused until it reaches them with the
    /// same content (`PublishedHistory`).
    ///
    /// - Throws: `BackupError`, or a `MasterDatabaseError` naming the file (`damaged` naming the
    ///   master when SQLite finds it or its copy damaged); nothing is left at `path` then.
    public func backup(to path: String) throws -> BackupResult {
        if FileManager.default.fileExists(atPath: path) || (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil {
            throw BackupError.exists(path)
        }
        let url = URL(fileURLWithPath: path)
        var isFolder: ObjCBool = false
        let folder = url.deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw BackupError.noFolder(path: path, folder: (path as NSString).deletingLastPathComponent)
        }
        let partial = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).partial-\(getpid())").path
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: partial + suffix) }
        }
        // SQLite's errors while the master is read name the master, not the copy.
        try MasterDatabaseError.translating(self.path) { try read { try Self.refuseDamage($0, path: self.path) } }
        return try MasterDatabaseError.translating(path) {
            let copy = try DatabaseQueue(path: partial, configuration: SQLiteDefences.configuration())
            try MasterDatabaseError.translating(self.path) { try queue.backup(to: copy) }
            let (check, version) = try copy.writeWithoutTransaction { db -> (String, Int) in
                // One file, whatever the master's journal: a backup is copied around as it is.
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                let check = try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ")
                return (check, try Self.dataVersion(db))
            }
            try copy.close()
            // The copy is the master's pages as they are: its damage is the master's.
            guard check == "ok" else { throw MasterDatabaseError.damaged(self.path, reason: check) }
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: partial))
            try handle.synchronize()
            try handle.close()
            guard link(partial, path) == 0 else {
                if errno == EEXIST { throw BackupError.exists(path) }
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(errno))])
            }
            let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            return BackupResult(path: path, version: version, bytes: bytes)
        }
    }
}
