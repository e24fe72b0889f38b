import GRDB

/// One row of the `updates` log.
///
/// For `duplicate`, `tableName` holds the *original* station code and `keyID` the new one
/// (the layout the clients' sync protocol has always used).
public struct Update: Codable, Sendable, Equatable, FetchableRecord, TableRecord {
    /// What a log row did to its row: ekidata's kinds, and DUPLICATE for a split.
    public enum Kind: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
        case insert = "INSERT"
        case update = "UPDATE"
        case delete = "DELETE"
        case restore = "RESTORE"
        case duplicate = "DUPLICATE"

        /// The kind as a JSON count key: lower snake_case, as every key of the JSON contract.
        public var countKey: String { rawValue.lowercased() }

        /// The kind as an SQL literal (`'DELETE'`), for the queries that stage and log changes:
        /// spelled from the case, never typed again.
        package var sql: String { "'\(rawValue)'" }
    }

    /// The log's table.
    public static let databaseTableName = "updates"

    /// The row's id: the order of the log.
    public var upID: Int64
    /// What the change did.
    public var type: Kind
    /// The master table; for a DUPLICATE, the old station code.
    public var tableName: String
    /// The row's key (`1120101`, `11302/1130201/1130202`); for a DUPLICATE, the new station code.
    public var keyID: String
    /// The data version that made the change.
    public var userVersion: Int
    /// When the version was committed (ISO 8601).
    public var updateDate: String
    /// The version's memo.
    public var memo: String?

    package enum CodingKeys: String, CodingKey {
        case upID = "up_id", type, tableName = "table_name", keyID = "key_id"
        case userVersion = "user_version", updateDate = "update_date", memo
    }

    /// Every key, `memo` as null when there is none (the JSON contract, docs/json.md).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(upID, forKey: .upID)
        try container.encode(type, forKey: .type)
        try container.encode(tableName, forKey: .tableName)
        try container.encode(keyID, forKey: .keyID)
        try container.encode(userVersion, forKey: .userVersion)
        try container.encode(updateDate, forKey: .updateDate)
        try container.encode(memo, forKey: .memo)
    }
}
