import Foundation
import GRDB
import StationManifest
import StationSignatures

/// What a database remembers of the manifests it accepted: the highest sequence (no rollback),
/// the newest `published_at` (the floor of its clock) and the dataset (pinned at the first
/// acceptance when the app names none).
///
/// It lives inside the database, in a table no release defines (`station_client_trust`), so it
/// travels with the records on every path: written when a manifest verifies (before any
/// download, so that a cut update still refuses an older manifest) and again in the update's own
/// transaction. A
/// record that cannot be read is refused, never taken for "nothing accepted yet": that would let
/// an older manifest be replayed.
struct TrustRecord: Equatable {
    var sequence = 0
    var publishedAt: String?
    var dataset: String?

    static let table = "station_client_trust"

    /// Where an earlier version of this library kept the record, beside the database.
    static func legacyFile(of database: String) -> String { database + ".trust.json" }

    /// The record of the database `db` is connected to (as `main`); the legacy file's when the
    /// table is missing; nothing accepted when neither exists.
    static func read(_ db: Database, database: String) throws -> TrustRecord {
        guard try db.tableExists(table) else { return try legacy(of: database) }
        let rows = try Row.fetchAll(db, sql: "SELECT * FROM \(table)")
        guard rows.count == 1, let row = rows.first else {
            throw StationClientError.damagedTrustState(database: database, reason: "\(rows.count) rows in \(table), not 1")
        }
        // Decoded by hand: GRDB's subscripts trap on a value of another type, and a damaged record must refuse.
        let value = { (column: String) -> DatabaseValue in row.hasColumn(column) ? row[column] : .null }
        guard case .int64(let sequence) = value("sequence").storage, sequence >= 0 else {
            throw StationClientError.damagedTrustState(database: database, reason: "no sequence, or not a whole number")
        }
        let text = { (column: String) throws -> String? in
            switch value(column).storage {
            case .null: return nil
            case .string(let text): return text
            default: throw StationClientError.damagedTrustState(database: database, reason: "\(column) is not text")
            }
        }
        let publishedAt = try text("published_at"), dataset = try text("dataset")
        if let publishedAt, SignedManifest.Fields.timestamp(from: publishedAt) == nil {
            throw StationClientError.damagedTrustState(database: database, reason: "published_at \(publishedAt) is not a UTC time")
        }
        return TrustRecord(sequence: Int(sequence), publishedAt: publishedAt, dataset: dataset)
    }

    static func legacy(of database: String) throws -> TrustRecord {
        guard let data = FileManager.default.contents(atPath: legacyFile(of: database)) else { return TrustRecord() }
        struct Stored: Decodable {
            var sequence: Int
            var published_at: String?
            var dataset: String?
        }
        guard let stored = try? JSONDecoder().decode(Stored.self, from: data), stored.sequence >= 0 else {
            throw StationClientError.damagedTrustState(database: database, reason: "\(legacyFile(of: database)) cannot be read")
        }
        return TrustRecord(sequence: stored.sequence, publishedAt: stored.published_at, dataset: stored.dataset)
    }

    /// This record after accepting `signed`.
    func accepting(_ signed: SignedManifest) -> TrustRecord {
        var next = self
        next.sequence = max(sequence, signed.fields.sequence)
        if publishedAtDate.map({ $0 < signed.fields.publishedAtDate }) ?? true { next.publishedAt = signed.fields.publishedAt }
        next.dataset = dataset ?? signed.fields.dataset
        return next
    }

    /// Writes the record into the database `db` is connected to, inside the caller's transaction.
    func write(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS \(Self.table) (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                sequence INTEGER NOT NULL CHECK (typeof(sequence) = 'integer' AND sequence >= 0),
                published_at TEXT,
                dataset TEXT)
            """)
        try db.execute(sql: "INSERT OR REPLACE INTO \(Self.table) (id, sequence, published_at, dataset) VALUES (1, ?, ?, ?)",
                       arguments: [sequence, publishedAt, dataset])
    }

    var publishedAtDate: Date? { publishedAt.flatMap(SignedManifest.Fields.timestamp(from:)) }
}

/// What a database accepted last: the floor of any manifest it takes next.
public struct AcceptedRelease: Sendable, Equatable {
    /// The highest manifest sequence accepted: a lower one is a rollback.
    public let sequence: Int
    /// The newest `published_at` accepted (UTC).
    public let publishedAt: String?
    /// The dataset pinned.
    public let dataset: String?

    /// What a consumer that records it itself read back (a server database's own table).
    public init(sequence: Int, publishedAt: String?, dataset: String?) {
        self.sequence = sequence
        self.publishedAt = publishedAt
        self.dataset = dataset
    }
}
