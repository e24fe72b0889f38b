import GRDB

/// A station split recorded in the log: every user record of `old` is copied to `new`
/// (DOMAIN.md, DUPLICATE).
///
/// In `updates` a split is a `DUPLICATE` row whose `table_name` holds the old station code and
/// `key_id` the new one (the layout the apps' sync inherited). `UpdateLog` is the only code that
/// reads that layout; everything else asks it for `StationSplit`s.
public struct StationSplit: Codable, Sendable, Hashable {
    public var old: Int64
    public var new: Int64
    /// The data version that recorded it.
    public var version: Int

    public init(old: Int64, new: Int64, version: Int) {
        self.old = old
        self.new = new
        self.version = version
    }
}

/// Reads the `updates` log.
enum UpdateLog {
    /// The splits recorded after `from` up to and including `to`, in the order they were
    /// recorded (a delta must replay them in that order).
    static func splits(_ db: Database, after from: Int = 0, through to: Int = .max) throws -> [StationSplit] {
        try Row.fetchAll(db, sql: """
            SELECT CAST(table_name AS INTEGER), CAST(key_id AS INTEGER), user_version FROM updates
            WHERE type = '\(Update.Kind.duplicate.rawValue)' AND user_version > ? AND user_version <= ? ORDER BY up_id
            """, arguments: [from, to]).map { StationSplit(old: $0[0], new: $0[1], version: $0[2]) }
    }

    /// Whether the split old → new is recorded already, in any version.
    static func hasSplit(_ db: Database, old: Int64, new: Int64) throws -> Bool {
        try Bool.fetchOne(db, sql: """
            SELECT EXISTS (SELECT 1 FROM updates WHERE type = '\(Update.Kind.duplicate.rawValue)' AND table_name = ? AND key_id = ?)
            """, arguments: [String(old), String(new)]) ?? false
    }

    /// Version → table → kind → rows; a split counts under stations.
    static func countsByVersion(_ db: Database) throws -> [Int: [String: [String: Int]]] {
        var counts: [Int: [String: [String: Int]]] = [:]
        for row in try Row.fetchAll(db, sql: """
            SELECT user_version,
                   CASE WHEN type = '\(Update.Kind.duplicate.rawValue)' THEN '\(MasterTable.stations.name)' ELSE table_name END,
                   type, COUNT(*)
            FROM updates GROUP BY 1, 2, 3
            """) {
            counts[row[0], default: [:]][row[1], default: [:]][row[2]] = row[3]
        }
        return counts
    }

    /// SQL condition: the row (aliased `alias`) changed a row of `table`, not a split.
    static func rowChangeCondition(_ table: MasterTable, alias: String? = nil) -> String {
        let prefix = alias.map { $0 + "." } ?? ""
        return "\(prefix)table_name = '\(table.name)' AND \(prefix)type <> '\(Update.Kind.duplicate.rawValue)'"
    }

    /// SQL conditions for `log`: rows of a table, or of a key, where a split belongs to the
    /// stations table and to its original station.
    static func tableCondition() -> String {
        "(table_name = ? OR (type = '\(Update.Kind.duplicate.rawValue)' AND ? = '\(MasterTable.stations.name)'))"
    }

    static func keyCondition() -> String {
        "(key_id = ? OR (type = '\(Update.Kind.duplicate.rawValue)' AND table_name = ?))"
    }
}
