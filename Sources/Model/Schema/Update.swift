import GRDB

/// One row of the `updates` log.
///
/// For `duplicate`, `tableName` holds the *original* station code and `keyID` the new one
/// (the layout the clients' sync protocol has always used).
public struct Update: Codable, Sendable, Equatable, FetchableRecord, TableRecord {
    public enum Kind: String, Codable, Sendable, CaseIterable, DatabaseValueConvertible {
        case insert = "INSERT"
        case update = "UPDATE"
        case delete = "DELETE"
        case restore = "RESTORE"
        case duplicate = "DUPLICATE"
    }

    public static let databaseTableName = "updates"

    public var upID: Int64
    public var type: Kind
    public var tableName: String
    public var keyID: String
    public var userVersion: Int
    public var updateDate: String
    public var memo: String?

    enum CodingKeys: String, CodingKey {
        case upID = "up_id", type, tableName = "table_name", keyID = "key_id"
        case userVersion = "user_version", updateDate = "update_date", memo
    }
}
