import Foundation
import GRDB
import StationSchema

/// One data version at a glance: when, who, why, and how many rows of each kind.
public struct VersionSummary: Codable, Sendable, Equatable {
    /// The data version.
    public var version: Int
    /// When it was committed (ISO 8601, UTC).
    public var date: String
    /// Who committed it; nil for versions made before authors were recorded.
    public var author: String?
    /// Its memo, as the import or plan gave it.
    public var memo: String?
    /// Table → kind (`INSERT` … `DUPLICATE`) → `updates` rows; splits count under stations.
    public var counts: [String: [String: Int]]
    /// Rows it wrote to the `updates` log.
    public var changes: Int

    /// Every key; no author or memo as null.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(date, forKey: .date)
        try container.encode(author, forKey: .author)
        try container.encode(memo, forKey: .memo)
        // Every table and kind, 0 when none.
        var all: [String: [String: Int]] = [:]
        for table in MasterTable.all {
            all[table.name] = Dictionary(uniqueKeysWithValues: Update.Kind.allCases.map { ($0.countKey, counts[table.name]?[$0.rawValue] ?? 0) })
        }
        try container.encode(all, forKey: .counts)
        try container.encode(changes, forKey: .changes)
    }
}

extension LogReader {
    /// Every data version, newest first (the first `limit` only, when given).
    ///
    /// Versions committed before the `versions` table existed take their date and memo from
    /// their first `updates` row, and have no author.
    public func versions(limit: Int? = nil) throws -> [VersionSummary] {
        try master.read { db in try VersionSummary.all(db, limit: limit) }
    }
}

extension VersionSummary {
    /// `MasterDatabase.versions(limit:)` in a read the caller holds; with `only`, that version
    /// alone (read by its index).
    package static func all(_ db: Database, limit: Int? = nil, only: Int? = nil) throws -> [VersionSummary] {
        var recorded: [Int: Row] = [:]
        if try db.tableExists("versions") {
            for row in try Row.fetchAll(db, sql: "SELECT version, committed_at, author, memo FROM versions") {
                recorded[row[0]] = row
            }
        }
        let counts = try UpdateLog.countsByVersion(db, only: only)
        return try UpdateLog.firstRowOfEachVersion(db, limit: limit, only: only).map { first in
            let version = first.version
            let perTable = counts[version] ?? [:]
            var date = first.date, author: String?, memo = first.memo
            if let row = recorded[version] {
                date = row["committed_at"]
                author = row["author"]
                memo = row["memo"]
            }
            return VersionSummary(
                version: version, date: date, author: author, memo: memo, counts: perTable,
                changes: perTable.values.flatMap(\.values).reduce(0, +))
        }
    }
}

/// A key `log` cannot show (a version it cannot show is `NoSuchVersion`).
public enum LogError: Error, LocalizedError, Equatable {
    case noSuchKey(String)

    public var errorDescription: String? {
        switch self {
        case let .noSuchKey(key):
            return "no updates row names key \(key.quotedForMessage()) (expected a code the log knows, e.g. a station_cd, or line_cd/station_cd1/station_cd2)"
        }
    }
}
