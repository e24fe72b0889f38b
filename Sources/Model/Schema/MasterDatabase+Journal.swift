import GRDB
import GRDBSQLite

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

    /// Puts the master back in WAL if it is not (a process died inside `withRollbackJournal`).
    func restoreWriteAheadLog() throws {
        try queue.writeWithoutTransaction { db in
            if try String.fetchOne(db, sql: "PRAGMA journal_mode") != "wal" {
                try db.execute(sql: "PRAGMA journal_mode = WAL")
            }
        }
    }
}
