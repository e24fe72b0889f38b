import Foundation

/// The files an update keeps beside the database, in one folder (`<database>.update/`): the
/// downloads (whose `.part` files a later update resumes) and the new content being made
/// (`incoming.sqlite`). Never the database, its journal or WAL, nor the lock file.
struct WorkFiles {
    let database: String

    var folder: String { database + ".update" }
    var incoming: String { folder + "/incoming.sqlite" }

    /// Where the download `name` goes; the folder is made when missing.
    func download(_ name: String) -> String {
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder + "/" + name
    }

    /// Removes the new content a killed update was making; a download's parts stay (the folder
    /// goes when nothing else is left in it).
    func removeScratch() throws {
        for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: incoming + suffix) }
        if (try? FileManager.default.contentsOfDirectory(atPath: folder))?.isEmpty == true { try FileManager.default.removeItem(atPath: folder) }
    }

    /// Removes every file of the update: it is done.
    func removeAll() throws {
        if FileManager.default.fileExists(atPath: folder) { try FileManager.default.removeItem(atPath: folder) }
    }
}

/// What an earlier version of this library left when killed while it swapped a new file in by
/// renames (`<database>.swap-journal`, `.incoming`, `.old`): finished when its journal was
/// written (the new file is complete then), undone otherwise. Run under the update lock.
struct LegacySwap {
    let database: String

    func recover() throws {
        let files = FileManager.default
        let journal = database + ".swap-journal", incoming = database + ".incoming", setAside = database + ".old"
        if files.fileExists(atPath: journal) {
            if files.fileExists(atPath: incoming) {
                if files.fileExists(atPath: database) && !files.fileExists(atPath: setAside) {
                    try files.moveItem(atPath: database, toPath: setAside)
                }
                guard rename(incoming, database) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            }
            for suffix in ["", "-journal", "-wal", "-shm"] { try? files.removeItem(atPath: setAside + suffix) }
            try files.removeItem(atPath: journal)
        } else {
            for suffix in ["", "-journal", "-wal", "-shm"] { try? files.removeItem(atPath: incoming + suffix) }
        }
        // Its downloads, which this version keeps in the update folder.
        let folder = (database as NSString).deletingLastPathComponent, name = (database as NSString).lastPathComponent
        for file in (try? files.contentsOfDirectory(atPath: folder.isEmpty ? "." : folder)) ?? []
        where file.hasPrefix(name + ".delta-from-") || file.hasPrefix(name + ".incoming.gz") || file.hasPrefix(name + ".carry-over.sql") {
            try? files.removeItem(atPath: (folder as NSString).appendingPathComponent(file))
        }
    }
}

/// Tells an update's progress to the app's stream.
struct ProgressReport: Sendable {
    let continuation: AsyncStream<UpdateProgress>.Continuation?

    /// What a download of `file` tells, as its bytes arrive.
    func downloading(_ file: ReleaseIndex.File) -> @Sendable (Int) -> Void {
        let continuation = continuation
        return { bytes in continuation?.yield(UpdateProgress(stage: .downloading(file.path), completedBytes: bytes, totalBytes: file.bytes)) }
    }

    func installing(_ done: Int, of total: Int) {
        continuation?.yield(UpdateProgress(stage: .installing, completedBytes: done, totalBytes: total))
    }
}
