import GRDB

/// Rows and closed rows of one master table.
public struct TableStatus: Codable, Sendable, Equatable {
    public var table: String
    public var rows: Int
    /// Rows with `e_status = 2`; always 0 for tables whose rows are removed instead.
    public var closed: Int
}

public struct DatabaseStatus: Codable, Sendable, Equatable {
    public var version: Int
    public var tables: [TableStatus]
    public var updates: Int
}

/// Which `updates` rows `log` shows; nil means any.
public struct LogFilter: Sendable {
    public var version: Int?
    public var table: String?
    public var key: String?
    public var type: Update.Kind?
    /// At most this many rows (after the order is applied).
    public var limit: Int?
    /// Newest first, as `git log`; a key's story reads oldest first.
    public var newestFirst: Bool

    public init(version: Int? = nil, table: String? = nil, key: String? = nil, type: Update.Kind? = nil,
                limit: Int? = nil, newestFirst: Bool = false) {
        self.version = version
        self.table = table
        self.key = key
        self.type = type
        self.limit = limit
        self.newestFirst = newestFirst
    }
}

extension MasterDatabase {
    public func status() throws -> DatabaseStatus {
        try read { db in
            let tables = try MasterTable.all.map { table in
                TableStatus(
                    table: table.name,
                    rows: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table.name)") ?? 0,
                    closed: table.closesByStatus
                        ? try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table.name) WHERE e_status = \(MasterTable.closedStatus)") ?? 0 : 0)
            }
            return DatabaseStatus(
                version: try Self.dataVersion(db), tables: tables,
                updates: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM updates") ?? 0)
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
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let version = filter.version {
            conditions.append("user_version = ?")
            arguments += [version]
        }
        if let table = filter.table {
            conditions.append(UpdateLog.tableCondition())
            arguments += [table, table]
        }
        if let key = filter.key {
            conditions.append(UpdateLog.keyCondition())
            arguments += [key, key]
        }
        if let type = filter.type {
            conditions.append("type = ?")
            arguments += [type.rawValue]
        }
        let whereClause = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let order = " ORDER BY up_id\(filter.newestFirst ? " DESC" : "")\(filter.limit.map { " LIMIT \($0)" } ?? "")"
        try read { db in
            if let version = filter.version {
                let newest = try Self.dataVersion(db)
                guard (1...max(newest, 1)).contains(version), newest > 0 else {
                    throw LogError.noSuchVersion(requested: version, newest: newest)
                }
            }
            if let key = filter.key, try !Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM updates WHERE \(UpdateLog.keyCondition()))", arguments: [key, key])! {
                throw LogError.noSuchKey(key)
            }
            let updates = try Update.fetchCursor(db, sql: "SELECT * FROM updates\(whereClause)\(order)", arguments: arguments)
            while let update = try updates.next() { try body(update) }
        }
    }
}
