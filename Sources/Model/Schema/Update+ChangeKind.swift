import GRDB

extension Update.Kind {
    /// The kind of change a row's new state makes to the one stored: the one definition the
    /// streaming diff (in Swift) and the set-based staging of curated rows and merged imports (in
    /// SQL, `changeSQL`) share. No row stored: INSERT; a closed row opening: RESTORE; an open row
    /// closing: DELETE; else UPDATE. A status is nil where the table (connections) or the file
    /// has none: then a stored row's change is an UPDATE.
    package static func change(stored: Bool, storedStatus: Int64?, newStatus: Int64?) -> Update.Kind {
        guard stored else { return .insert }
        guard let storedStatus, let newStatus else { return .update }
        let closed = Int64(MasterTable.closedStatus)
        if storedStatus == closed && newStatus != closed { return .restore }
        if storedStatus != closed && newStatus == closed { return .delete }
        return .update
    }

    /// `change(stored:storedStatus:newStatus:)` as a SQL expression over the stored row (alias
    /// `stored`, NULL keys where none is) and the new one (alias `new`) of `table`.
    package static func changeSQL(_ table: MasterTable, stored: String, new: String) -> String {
        let closed = MasterTable.closedStatus
        guard table.closesByStatus else { return "CASE WHEN \(stored).\(table.keyColumns[0]) IS NULL THEN \(Update.Kind.insert.sql) ELSE \(Update.Kind.update.sql) END" }
        return """
            CASE WHEN \(stored).\(table.keyColumns[0]) IS NULL THEN \(Update.Kind.insert.sql)
                 WHEN \(stored).e_status = \(closed) AND \(new).e_status <> \(closed) THEN \(Update.Kind.restore.sql)
                 WHEN \(stored).e_status <> \(closed) AND \(new).e_status = \(closed) THEN \(Update.Kind.delete.sql)
                 ELSE \(Update.Kind.update.sql) END
            """
    }
}
