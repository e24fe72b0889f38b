import GRDB
import StationManifest

/// Reads the `updates` log: the one place that knows its layout (a split is a `DUPLICATE` row
/// whose `table_name` holds the old station code and `key_id` the new one). Queries that join
/// the log with other tables take their SQL from here.
///
/// For example, the rows a delta from version 3 to 7 must send for `stations`, and the splits it
/// must carry out on the phone, inside one read transaction of the master:
///
///     let keys = UpdateLog.changedKeys(of: .stations, after: 3, through: 7)
///     // SELECT DISTINCT key_id FROM updates WHERE table_name = 'stations' AND user_version > 3 …
///     let rows = try Row.fetchAll(db, sql: VersionedState(table: .stations, version: 7).select(restrictedTo: keys))
///     let splits = try UpdateLog.splits(db, after: 3, through: 7)
///     // [StationSplit(old: 1141512, new: 9944001, version: 5), …]
///
/// The log is appended to by `VersionWriter` alone, one row per changed key and version.
package enum UpdateLog {
    /// The newest data version (0 for an empty log).
    package static func newestVersion(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COALESCE(MAX(user_version), 0) FROM updates") ?? 0
    }

    /// SQL subquery: the keys (`key_id`) of `table` that versions after `from` up to and
    /// including `to` changed, optionally only by the given kinds; never a split.
    package static func changedKeys(of table: MasterTable, after from: Int, through to: Int, kinds: [Update.Kind]? = nil) -> String {
        let kindCondition = kinds.map { " AND type IN (\($0.map(\.sql).joined(separator: ", ")))" } ?? ""
        return "SELECT key_id FROM updates WHERE \(versionRange(of: table, after: from, through: to))\(kindCondition)"
    }

    /// SQL subquery: `key_id, change, previous_change`: every change of a key of `table` after
    /// `from` up to and including `to`, with the key's previous change in that span (NULL for
    /// its first); never a split.
    package static func changes(of table: MasterTable, after from: Int, through to: Int) -> String {
        """
        SELECT key_id, user_version AS change, LAG(user_version) OVER (PARTITION BY key_id ORDER BY user_version) AS previous_change
        FROM updates WHERE \(versionRange(of: table, after: from, through: to))
        """
    }

    /// SQL condition: changes of rows of `table` (not splits) by versions after `from` up to and
    /// including `to`, found through `updates_by_version`. Without statistics SQLite prefers
    /// `updates_by_key` for the equal table name and reads every log row of the table; the unary
    /// `+` takes that index out of play.
    private static func versionRange(of table: MasterTable, after from: Int, through to: Int) -> String {
        "+table_name = '\(table.name)' AND type <> \(Update.Kind.duplicate.sql) AND user_version > \(from) AND user_version <= \(to)"
    }

    /// SQL subquery: the keys of `table` that `version` changed by `kind`; with `first`, only
    /// that many, the first the log recorded. By the index on the table's keys, so that a table
    /// of few changes is not found by reading every row of a large version.
    package static func keys(of table: MasterTable, in version: Int, kind: Update.Kind, first: Int? = nil) -> String {
        """
        SELECT key_id FROM updates WHERE table_name = '\(table.name)' AND type = \(kind.sql) AND user_version = \(version)\
        \(first.map { " ORDER BY up_id LIMIT \($0)" } ?? "")
        """
    }

    /// SQL subquery: the keys of `table` that `version` changed, optionally only by `kinds`.
    package static func changedKeys(of table: MasterTable, in version: Int, kinds: [Update.Kind]? = nil) -> String {
        changedKeys(of: table, after: version - 1, through: version, kinds: kinds)
    }

    /// SQL subquery: `key_id` of each row of `table` that one of `versions` changed by one of `kinds`.
    package static func changedKeys(of table: MasterTable, inVersions versions: Set<Int>, kinds: [Update.Kind]) -> String {
        """
        SELECT key_id FROM updates WHERE table_name = '\(table.name)' AND user_version IN (\(versions.sorted().map(String.init).joined(separator: ", ")))
          AND type IN (\(kinds.map(\.sql).joined(separator: ", ")))
        """
    }

    /// The splits recorded after `from` up to and including `to`, in the order they were
    /// recorded (a delta must replay them in that order).
    package static func splits(_ db: Database, after from: Int = 0, through to: Int = .max) throws -> [StationSplit] {
        try Row.fetchAll(db, sql: """
            SELECT CAST(table_name AS INTEGER), CAST(key_id AS INTEGER), user_version FROM updates
            WHERE type = \(Update.Kind.duplicate.sql) AND user_version > ? AND user_version <= ? ORDER BY up_id
            """, arguments: [from, to]).map { StationSplit(old: $0[0], new: $0[1], version: $0[2]) }
    }

    /// Whether the split old → new is recorded already, in any version.
    package static func hasSplit(_ db: Database, old: Int64, new: Int64) throws -> Bool {
        try Bool.fetchOne(db, sql: """
            SELECT EXISTS (SELECT 1 FROM updates WHERE type = \(Update.Kind.duplicate.sql) AND table_name = ? AND key_id = ?)
            """, arguments: [String(old), String(new)]) ?? false
    }

    /// Version → table → kind → rows; a split counts under stations. Read from `version_counts`,
    /// kept as each version is written; counted from the log (with `only`, that version's rows
    /// alone, by the version's index) in a master that no write has migrated to keep them yet
    /// (migrations run at the first write).
    package static func countsByVersion(_ db: Database, only: Int? = nil) throws -> [Int: [String: [String: Int]]] {
        var counts: [Int: [String: [String: Int]]] = [:]
        let sql = try db.tableExists("version_counts")
            ? "SELECT version, table_name, type, count FROM version_counts\(only.map { " WHERE version = \($0)" } ?? "")"
            : """
            SELECT user_version,
                   CASE WHEN type = \(Update.Kind.duplicate.sql) THEN '\(MasterTable.stations.name)' ELSE table_name END,
                   type, COUNT(*)
            FROM updates\(only.map { " WHERE user_version = \($0)" } ?? "") GROUP BY 1, 2, 3
            """
        for row in try Row.fetchAll(db, sql: sql) {
            counts[row[0], default: [:]][row[1], default: [:]][row[2]] = row[3]
        }
        return counts
    }

    /// SQL condition: the row (aliased `alias`) changed a row of `table`, not a split.
    package static func rowChangeCondition(_ table: MasterTable, alias: String? = nil) -> String {
        let prefix = alias.map { $0 + "." } ?? ""
        return "\(prefix)table_name = '\(table.name)' AND \(prefix)type <> \(Update.Kind.duplicate.sql)"
    }

    /// SQL conditions for `log`: rows of a table, or of a key, where a split belongs to the
    /// stations table and to its original station.
    package static func tableCondition() -> String {
        "(table_name = ? OR (type = \(Update.Kind.duplicate.sql) AND ? = '\(MasterTable.stations.name)'))"
    }

    package static func keyCondition() -> String {
        "(key_id = ? OR (type = \(Update.Kind.duplicate.sql) AND table_name = ?))"
    }

    /// How many rows the log holds.
    package static func count(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM updates") ?? 0
    }

    /// Whether any row names `key` (as a row's key, or as a split's old station).
    package static func names(key: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM updates WHERE \(keyCondition()))", arguments: [key, key]) ?? false
    }

    /// The rows `filter` selects, in its order, one at a time (see `LogFilter`).
    package static func forEach(_ filter: LogFilter, _ db: Database, _ body: (Update) throws -> Void) throws {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let version = filter.version {
            conditions.append("user_version = ?")
            arguments += [version]
        }
        if let table = filter.table {
            conditions.append(tableCondition())
            arguments += [table, table]
        }
        if let key = filter.key {
            conditions.append(keyCondition())
            arguments += [key, key]
        }
        if let type = filter.type {
            conditions.append("type = ?")
            arguments += [type.rawValue]
        }
        for (bound, isLower) in [(filter.since, true), (filter.until, false)] {
            guard let (condition, boundArguments) = bound?.condition(isLower: isLower) else { continue }
            conditions.append(condition)
            arguments += boundArguments
        }
        if let author = filter.author {
            conditions.append("user_version IN (SELECT version FROM versions WHERE author = ?)")
            arguments += [author]
        }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let order = " ORDER BY up_id\(filter.newestFirst ? " DESC" : "")\(filter.limit.map { " LIMIT \($0)" } ?? "")"
        let rows = try Update.fetchCursor(db, sql: "SELECT * FROM updates\(whereClause)\(order)", arguments: arguments)
        while let row = try rows.next() { try body(row) }
    }

    /// The first row of each version, newest first: its date and memo stand for the version's
    /// when the master did not record them (versions made before `versions` existed).
    /// (One version's without GROUP BY: SQLite then takes its MIN(up_id) from the version's index
    /// in one step, instead of walking its rows, 2M for a 1M initial version.)
    package static func firstRowOfEachVersion(_ db: Database, limit: Int? = nil, only: Int? = nil) throws -> [(version: Int, date: String, memo: String?)] {
        try Row.fetchAll(db, sql: """
            SELECT user_version, update_date, memo FROM updates
            WHERE up_id IN (\(only.map { "SELECT MIN(up_id) FROM updates WHERE user_version = \($0)" } ?? "SELECT MIN(up_id) FROM updates GROUP BY user_version"))
            ORDER BY user_version DESC\(limit.map { " LIMIT \($0)" } ?? "")
            """).map { ($0[0], $0[1], $0[2]) }
    }

    /// The newest version that changed a row (never by a split), with the version's memo.
    package static func newestChange(of table: MasterTable, key: String, kind: Update.Kind? = nil, _ db: Database) throws -> (version: Int, memo: String?)? {
        try Row.fetchOne(db, sql: """
            SELECT u.user_version, v.memo FROM updates u LEFT JOIN versions v ON v.version = u.user_version
            WHERE u.table_name = ? AND u.key_id = ? AND u.type <> \(Update.Kind.duplicate.sql)\(kind.map { " AND u.type = \($0.sql)" } ?? "")
            ORDER BY u.user_version DESC LIMIT 1
            """, arguments: [table.name, key]).map { ($0[0], $0[1]) }
    }

    /// The version that wrote a row's `column` to `value` (its value now), with the version's memo:
    /// the newest change of the row whose state before it had another value in that column, or
    /// that made the row. A later version that changed only other columns of the row is passed
    /// over, so a curator who reverts the version named reverts the value's own. A name that is
    /// not a column of the table (a connection's `row`) is the row's newest change.
    package static func columnOrigin(of table: MasterTable, key: String, column: String, value: DatabaseValue,
                                     _ db: Database) throws -> (version: Int, memo: String?)? {
        guard let kind = table.columns.first(where: { $0.name == column })?.kind else { return try newestChange(of: table, key: key, db) }
        let changes = try Row.fetchAll(db, sql: """
            SELECT u.user_version, v.memo, h.key_id IS NOT NULL, h.\(column) FROM updates u
            LEFT JOIN versions v ON v.version = u.user_version
            LEFT JOIN \(table.historyTable) h ON h.key_id = u.key_id AND h.valid_to = u.user_version
            WHERE u.table_name = ? AND u.key_id = ? AND u.type <> \(Update.Kind.duplicate.sql)
            ORDER BY u.user_version DESC
            """, arguments: [table.name, key])
        var after = value
        for change in changes {
            let hadState: Bool = change[2]
            let before: DatabaseValue = change[3]
            if !hadState || FieldChange.differ(after, before, kind) { return (change[0], change[1]) }
            after = before
        }
        return nil
    }

    /// The first version after `version` that changed a row (never by a split), if one did.
    package static func firstChange(of table: MasterTable, key: String, after version: Int, _ db: Database) throws -> Int? {
        try Int.fetchOne(db, sql: """
            SELECT MIN(user_version) FROM updates WHERE table_name = ? AND key_id = ? AND user_version > ? AND type <> \(Update.Kind.duplicate.sql)
            """, arguments: [table.name, key, version])
    }

    /// The rows `version` changed in `table` (never its splits), in the order it wrote them.
    package static func rows(of table: MasterTable, in version: Int, _ db: Database) throws -> [(key: String, kind: Update.Kind)] {
        try Row.fetchAll(db, sql: """
            SELECT key_id, type FROM updates WHERE user_version = ? AND table_name = ? AND type <> \(Update.Kind.duplicate.sql) ORDER BY up_id
            """, arguments: [version, table.name]).map { ($0[0], Update.Kind(rawValue: $0[1]) ?? .update) }
    }

    /// SQL subquery: a row of the log in `schema` that changed the row of `table` whose key text
    /// is `key` (SQL) after `version`; `VersionedState` asks whether one exists.
    package static func changeAfter(_ version: Int, of table: MasterTable, key: String, schema: String = "main") -> String {
        "SELECT 1 FROM \(schema).updates u WHERE \(rowChangeCondition(table, alias: "u")) AND u.key_id = \(key) AND u.user_version > \(version)"
    }

    /// SQL subquery: the first version after `version` that changed the row of `table` whose key
    /// text is `key` (SQL): the history row that holds the key's state at `version`.
    package static func firstChangeAfter(_ version: Int, of table: MasterTable, key: String, schema: String = "main") -> String {
        "SELECT MIN(u.user_version) FROM \(schema).updates u WHERE \(rowChangeCondition(table, alias: "u")) AND u.key_id = \(key) AND u.user_version > \(version)"
    }
}

extension Update {
    /// For a DUPLICATE row, the split it records; nil for any other row.
    public var split: StationSplit? {
        guard type == .duplicate, let old = Int64(tableName), let new = Int64(keyID) else { return nil }
        return StationSplit(old: old, new: new, version: userVersion)
    }

    /// The table and key the row is about: a split is about the stations, `1120101 → 9920607`.
    public var subject: (table: String, key: String) {
        if let split { return (MasterTable.stations.name, "\(split.old) → \(split.new)") }
        return (tableName, keyID)
    }
}
