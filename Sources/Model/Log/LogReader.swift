import GRDB
import StationSchema

/// Reads a master's log for people: its status, the changes of each version, the versions and their
/// authors, a key's story.
///
/// A capability over the thin `MasterDatabase` handle, as GRDB's `DatabaseMigrator` takes a
/// writer: `try LogReader(master).…`.
public struct LogReader: Sendable {
    /// The master whose log it reads.
    public let master: MasterDatabase

    /// A reader of `master`'s log.
    public init(_ master: MasterDatabase) {
        self.master = master
    }
}

/// Rows and closed rows of one master table.
public struct TableStatus: Codable, Sendable, Equatable {
    /// The master table.
    public var table: String
    /// Its rows, closed ones included.
    public var rows: Int
    /// Rows with `e_status = 2`; always 0 for tables whose rows are removed instead.
    public var closed: Int
}

/// `status`: the newest version, each table's rows and the log's length.
public struct DatabaseStatus: Codable, Sendable, Equatable {
    /// The newest data version.
    public var version: Int
    /// Every master table, in `MasterTable.all` order.
    public var tables: [TableStatus]
    /// Rows of the `updates` log.
    public var updates: Int
}

extension LogReader {
    /// The master at a glance, read in one transaction.
    public func status() throws -> DatabaseStatus {
        try master.read { db in
            let tables = try MasterTable.all.map { table in
                TableStatus(
                    table: table.name,
                    rows: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table.name)") ?? 0,
                    closed: table.closesByStatus
                        ? try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table.name) WHERE e_status = \(MasterTable.closedStatus)") ?? 0 : 0)
            }
            return DatabaseStatus(
                version: try MasterDatabase.dataVersion(db), tables: tables,
                updates: try UpdateLog.count(db))
        }
    }

    /// The `updates` rows matching `filter`, oldest first unless `newestFirst`.
    ///
    /// A key filter also finds the DUPLICATE rows that name the key as the original
    /// station (`table_name`), so `log --key 1120101` tells a station's whole story.
    ///
    /// - Throws: `LogError` for a version or a key the log does not have (rather than an
    ///   empty answer that looks like "nothing happened").
    public func log(_ filter: LogFilter = LogFilter()) throws -> [Update] {
        var updates: [Update] = []
        try forEachUpdate(filter) { updates.append($0) }
        return updates
    }

    /// Calls `body` with each `updates` row `filter` selects, read from one state, one row at a
    /// time: the two million rows of a million-station import are never held at once.
    public func forEachUpdate(_ filter: LogFilter = LogFilter(), _ body: (Update) throws -> Void) throws {
        try forEachUpdate(filter) { update, _ in try body(update) }
    }

    /// Calls `body` with each `updates` row `filter` selects and what it changed, in words and
    /// values (`東京: weight 13 → 2`), read from one state, one row at a time.
    public func forEachDescribedUpdate(_ filter: LogFilter = LogFilter(), _ body: (StoryEntry) throws -> Void) throws {
        let sources = VersionSource.Cache()
        try forEachUpdate(filter) { update, db in
            try body(StoryEntry(update: update, change: try DescribedChange.reading(update, master.declared, db),
                                source: try sources.source(of: update.userVersion, db)))
        }
    }

    /// The source whose import made `version` and its snapshot; nil for a curated version.
    public func source(of version: Int) throws -> VersionSource? {
        try master.read { try VersionSource.of(version: version, $0) }
    }

    /// The source of the import that decided `note`: the one that made its version, or one that
    /// changed nothing and recorded it (its decisions are kept all the same).
    public func source(of note: MergeNote) throws -> VersionSource? {
        try master.read { try VersionSource.of(version: note.version, orUnchanged: true, $0) }
    }

    package func forEachUpdate(_ filter: LogFilter, _ body: (Update, Database) throws -> Void) throws {
        try master.read { db in
            if let version = filter.version {
                try NoSuchVersion.require(version, newest: try MasterDatabase.dataVersion(db))
            }
            if let key = filter.key, try !UpdateLog.names(key: key, db) { throw LogError.noSuchKey(key) }
            try UpdateLog.forEach(filter, db) { try body($0, db) }
        }
    }
}
