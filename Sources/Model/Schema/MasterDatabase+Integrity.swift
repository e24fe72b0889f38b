import GRDB

extension MasterDatabase {
    /// SQLite's full integrity check of the master file: nil when it is sound, else SQLite's
    /// words for what is damaged. It reads every page (seconds at a million stations), so the
    /// write commands do not run it; a page SQLite finds damaged while it works is refused by
    /// any command (`MasterDatabaseError.damaged`).
    ///
    /// - Throws: `MasterDatabaseError.unexpectedSchema` for a master holding schema objects its
    ///   migrations did not make (`MasterSchemaObjects`), before SQLite's check.
    public func integrityProblems() throws -> String? {
        try read { try MasterSchemaObjects.refuseUnexpected($0, declared, path: path) }
        let lines = try read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
        return lines == ["ok"] ? nil : lines.joined(separator: "; ")
    }
}
