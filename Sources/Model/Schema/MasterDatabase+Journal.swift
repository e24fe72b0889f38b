import GRDB
import GRDBSQLite
import StationSupport

extension MasterDatabase {
    /// Runs `body`, whose writes go through `write`, with the master in SQLite's rollback
    /// journal instead of WAL; nil, without running it, when another connection has the file
    /// open (the journal cannot change then, and nothing waits for it to).
    ///
    /// For a first import into an empty master: every page it writes is new, and a rollback
    /// journal writes a new page once, into the file, where WAL writes it to the log, copies it
    /// into the file at the checkpoint, and syncs both. Other processes cannot read while the
    /// import writes (a rollback journal lets no reader in once the writer writes pages), and
    /// wait for it as for any writer; an empty master can afford that. The master is in WAL again
    /// when `body` ends, or, if the process dies first, at its next `write`: a rollback journal
    /// left behind is rolled back by SQLite at the next read, as WAL would be.
    package func withRollbackJournal<T>(_ body: () throws -> T) throws -> T? {
        let switched = try queue.writeWithoutTransaction { db -> Bool in
            let timeout = try Int.fetchOne(db, sql: "PRAGMA busy_timeout") ?? 0
            sqlite3_busy_timeout(db.sqliteConnection, 0)
            defer { sqlite3_busy_timeout(db.sqliteConnection, Int32(clamping: timeout)) }
            return (try? String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE")) == "delete"
        }
        guard switched else { return nil }
        holdsRollbackJournal.withLock { $0 = true }
        defer {
            holdsRollbackJournal.withLock { $0 = false }
            try? restoreWriteAheadLog()
        }
        return try body()
    }

    /// Stops `db`, this handle's connection, from copying the write-ahead log into the master by
    /// itself after a commit (SQLite's automatic checkpoint, past 1,000 pages): the commit then
    /// returns as soon as its pages are in the log, and the caller copies them
    /// (`checkpointInBackground`) while it goes on. Returns the setting, for
    /// `resumeAutomaticCheckpoints`.
    package func holdAutomaticCheckpoints(_ db: Database) throws -> Int {
        let pages = try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? 1000
        try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
        return pages
    }

    /// Gives this handle's connection back its automatic checkpoints (`pages`, as
    /// `holdAutomaticCheckpoints` returned it).
    package func resumeAutomaticCheckpoints(_ pages: Int) throws {
        try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_autocheckpoint = \(pages)") }
    }

    /// Copies the write-ahead log's pages into the master on a connection of its own (SQLite's
    /// passive checkpoint, what a commit does by itself): this handle may read and write
    /// meanwhile, as may other processes, for a checkpoint takes no write lock.
    package func checkpointInBackground() -> BackgroundTask<Void> {
        let path = path
        return BackgroundTask {
            try MasterDatabaseError.translating(path) {
                let queue = try DatabaseQueue(path: path, configuration: Self.configuration(label: "checkpoint"))
                try queue.writeWithoutTransaction { _ = try Row.fetchAll($0, sql: "PRAGMA wal_checkpoint(PASSIVE)") }
            }
        }
    }

    /// Puts the master back in WAL if it is not (a process died inside `withRollbackJournal`).
    func restoreWriteAheadLog() throws {
        try queue.writeWithoutTransaction { db in
            if try String.fetchOne(db, sql: "PRAGMA journal_mode") != "wal" {
                try db.execute(sql: "PRAGMA journal_mode = WAL")
            }
        }
    }
}
