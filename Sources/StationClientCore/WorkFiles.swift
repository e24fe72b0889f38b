import Foundation
import StationFiles
import StationManifest

/// The files an update keeps beside the database, in one folder (`<database>.update/`): the
/// downloads (whose `.part` files a later update resumes) and the new content being made
/// (`incoming.sqlite`). Never the database, its journal or WAL, nor the lock file.
struct WorkFiles {
    let database: String

    var folder: String { database + ".update" }
    var incoming: String { folder + "/incoming.sqlite" }

    /// Where the download `name` goes; the folder is made when missing (mode 0700).
    ///
    /// - Throws: `StationClientError.unsafeFile` when the folder is a link, another user's, or
    ///   writable by others: a file planted there (a part file linked to another, a forged
    ///   `incoming.sqlite`) would be written through or installed.
    func download(_ name: String) throws -> String {
        try requirePrivateFolder(create: true)
        return folder + "/" + name
    }

    /// The folder as `OwnFiles` requires it; with `create`, made private when missing.
    func requirePrivateFolder(create: Bool) throws {
        do {
            try OwnFiles.folder(folder, create: create)
        } catch let refusal as OwnFiles.Refusal {
            throw StationClientError.unsafeFile(path: refusal.path, reason: refusal.reason)
        } catch let error as OwnFiles.SystemError {
            throw StationClientError.converted(POSIXError(POSIXErrorCode(rawValue: error.code) ?? .EIO), path: error.path)
        }
    }

    /// Removes the new content a killed update was making; a download's parts stay (the folder
    /// goes when nothing else is left in it). A folder that is not this user's own is refused
    /// before anything in it is touched.
    func removeScratch() throws {
        guard FileManager.default.fileExists(atPath: folder) || (try? FileManager.default.destinationOfSymbolicLink(atPath: folder)) != nil else { return }
        try requirePrivateFolder(create: false)
        for suffix in ["", "-journal", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: incoming + suffix)
            try? FileManager.default.removeItem(atPath: folder + "/bundled.sqlite" + suffix)
        }
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

/// Tells an update's progress to the app's stream: each stage in its unit, and the whole update's
/// fraction, each stage given a share of it by the path (the downloads half of a delta's or a
/// full update's; inflating a quarter of a full update's), never going down.
final class ProgressReport: Sendable {
    private let continuation: AsyncStream<UpdateProgress>.Continuation?
    private let shares: [Share]
    private let last = Locked(0.0)

    private struct Share {
        let matches: @Sendable (UpdateProgress.Stage) -> Bool
        let start: Double
        let end: Double
    }

    init(continuation: AsyncStream<UpdateProgress>.Continuation?, path: UpdatePath) {
        self.continuation = continuation
        let downloading: @Sendable (UpdateProgress.Stage) -> Bool = { if case .downloading = $0 { return true } else { return false } }
        switch path {
        case .delta: shares = [Share(matches: downloading, start: 0, end: 0.5), Share(matches: { $0 == .installing }, start: 0.5, end: 1)]
        case .full: shares = [Share(matches: downloading, start: 0, end: 0.5), Share(matches: { $0 == .inflating }, start: 0.5, end: 0.75),
                              Share(matches: { $0 == .installing }, start: 0.75, end: 1)]
        case .bundled: shares = [Share(matches: { $0 == .installing }, start: 0, end: 1)]
        }
    }

    private func tell(_ stage: UpdateProgress.Stage, _ completed: Int, _ total: Int, _ unit: UpdateProgress.Unit) {
        guard let continuation else { return }
        let share = shares.first { $0.matches(stage) }
        let within = total > 0 ? min(1, Double(completed) / Double(total)) : 1
        let fraction = last.withValue { last in
            last = max(last, share.map { $0.start + ($0.end - $0.start) * within } ?? last)
            return last
        }
        continuation.yield(UpdateProgress(stage: stage, completed: completed, total: total, unit: unit, fractionCompleted: fraction))
    }

    /// What a download of `file` tells, as its bytes arrive.
    func downloading(_ file: ReleaseIndex.File) -> @Sendable (Int) -> Void {
        { [self] bytes in tell(.downloading(file.path), bytes, file.bytes, .bytes) }
    }

    func inflating(_ done: Int, of total: Int) { tell(.inflating, done, total, .bytes) }

    func installing(_ done: Int, of total: Int, _ unit: UpdateProgress.Unit) { tell(.installing, done, total, unit) }
}
