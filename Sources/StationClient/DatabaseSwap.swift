import Foundation

/// Putting a new database file in place of the working one, so that a process killed at any
/// instant leaves, at the next launch, the old file or the new one, never a mix.
///
/// The new file (`incoming`, with every record carried over) is complete before the journal is
/// written; the journal is the decision. `recover()` (run when a `StationUpdater` is made, that is
/// at launch) finishes a swap whose journal exists, and removes an incoming file whose journal
/// does not: the old database is then untouched.
struct DatabaseSwap {
    let database: String

    var incoming: String { database + ".incoming" }
    var journal: String { database + ".swap-journal" }
    var setAside: String { database + ".old" }

    /// Finishes or undoes what a killed swap left.
    func recover() throws {
        let files = FileManager.default
        if files.fileExists(atPath: journal) {
            if files.fileExists(atPath: incoming) {
                if files.fileExists(atPath: database) && !files.fileExists(atPath: setAside) {
                    try files.moveItem(atPath: database, toPath: setAside)
                }
                try rename(incoming, database)
            }
            try removeLeftovers(of: setAside)
            try files.removeItem(atPath: journal)
        } else {
            try removeLeftovers(of: incoming)
        }
    }

    /// Swaps `incoming` in, after its journal; `onStep` is told each step.
    func swap(onStep: (UpdateStep) throws -> Void) throws {
        // Its existence is the decision; what it says is for a person who finds it.
        try JSONSerialization.data(withJSONObject: ["incoming": URL(fileURLWithPath: incoming).lastPathComponent])
            .write(to: URL(fileURLWithPath: journal), options: .atomic)
        try syncDirectory()
        try onStep(.journalWritten)
        if FileManager.default.fileExists(atPath: database) {
            try FileManager.default.moveItem(atPath: database, toPath: setAside)
            try onStep(.oldSetAside)
        }
        try rename(incoming, database)
        try syncDirectory()
        try onStep(.swapped)
        try removeLeftovers(of: setAside)
        try FileManager.default.removeItem(atPath: journal)
        try removeLeftovers(of: database, keepingTheFile: true)
    }

    /// Removes `path` and SQLite's files beside it (a rollback journal, a WAL).
    private func removeLeftovers(of path: String, keepingTheFile: Bool = false) throws {
        for suffix in (keepingTheFile ? [] : [""]) + ["-journal", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }

    private func rename(_ from: String, _ to: String) throws {
        guard Foundation.rename(from, to) == 0 else {
            throw StationClientError.database("cannot rename \(from) to \(to): \(String(cString: strerror(errno)))")
        }
    }

    private func syncDirectory() throws {
        let directory = open((database as NSString).deletingLastPathComponent.isEmpty ? "." : (database as NSString).deletingLastPathComponent,
                             O_RDONLY | O_DIRECTORY)
        guard directory >= 0 else { return }
        fsync(directory)
        close(directory)
    }
}
