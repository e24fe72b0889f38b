import Foundation
import GRDB
import StationSupport

/// A master value as a merge shows it: JSON's own types, `NULL` in words.
public enum MergeValue: Codable, Sendable, Hashable, CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    package init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let number): self = .integer(number)
        case .double(let number): self = .real(number)
        case .string(let text): self = .text(text)
        case .blob(let data): self = .text(String(decoding: data, as: UTF8.self))
        }
    }

    /// The conflict in words.
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let number): return String(number)
        case .real(let number): return String(number)
        case .text(let text): return text
        }
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let number = try? container.decode(Int64.self) { self = .integer(number) }
        else if let number = try? container.decode(Double.self) { self = .real(number) }
        else { self = .text(try container.decode(String.self)) }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .integer(let number): try container.encode(number)
        case .real(let number): try container.encode(number)
        case .text(let text): try container.encode(text)
        }
    }
}

/// A row of `merge_notes`: a curated value a merge kept where the file says otherwise (upstream did not change it since
/// its last file), or a decision a merge carried out: `merge_notes`, shown with the row's log.
public struct MergeNote: Codable, Sendable, Equatable {
    /// What the merge did with the column.
    public enum Outcome: String, Codable, Sendable {
        /// Upstream did not change the column; the curated value stays.
        case kept
        /// A conflict decided for the master's value.
        case ours
        /// A conflict decided for the file's value.
        case theirs
        /// A provisional row closed for upstream's (`column` holds upstream's code).
        case adopted
    }

    /// The version the merge made.
    public var version: Int
    /// The table the row belongs to.
    public var table: String
    /// The row's key as in `updates.key_id`.
    public var key: String
    /// The column decided.
    public var column: String
    /// What the merge did.
    public var outcome: Outcome
    /// What upstream's last file said.
    public var base: MergeValue
    /// The master's value before the merge.
    public var ours: MergeValue
    /// What the file said.
    public var theirs: MergeValue
    /// The version the master's value came from.
    public var oursVersion: Int?

    package init(version: Int, table: String, key: String, column: String, outcome: Outcome, base: MergeValue, ours: MergeValue,
                 theirs: MergeValue, oursVersion: Int?) {
        self.version = version
        self.table = table
        self.key = key
        self.column = column
        self.outcome = outcome
        self.base = base
        self.ours = ours
        self.theirs = theirs
        self.oursVersion = oursVersion
    }

    package enum CodingKeys: String, CodingKey {
        case version, table, key, column, outcome, base, ours, theirs
        case oursVersion = "ours_version"
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(table, forKey: .table)
        try container.encode(key, forKey: .key)
        try container.encode(column, forKey: .column)
        try container.encode(outcome, forKey: .outcome)
        try container.encode(base, forKey: .base)
        try container.encode(ours, forKey: .ours)
        try container.encode(theirs, forKey: .theirs)
        try container.encode(oursVersion, forKey: .oursVersion)
    }

    /// `stations 1191420 close_ymd: kept 2017-07-05 from v3 (the file says NULL)`.
    public var description: String {
        let origin = oursVersion.map { " from v\($0)" } ?? ""
        switch outcome {
        case .kept: return "\(table) \(key) \(column): kept \(ours)\(origin) (the file says \(theirs))"
        case .ours: return "\(table) \(key) \(column): conflict decided for ours, \(ours)\(origin) (base \(base), theirs \(theirs))"
        case .theirs: return "\(table) \(key) \(column): conflict decided for theirs, \(theirs) (base \(base), ours \(ours)\(origin))"
        case .adopted where table == "connections":
            return "\(table) \(key): provisional, removed for upstream's connections of line \(theirs)"
        case .adopted: return "\(table) \(key): provisional, closed for upstream's \(theirs)"
        }
    }

    /// The notes of one row (of any table when `table` is nil), oldest first.
    package static func notes(table: String?, key: String, _ db: Database) throws -> [MergeNote] {
        try Row.fetchAll(db, sql: """
            SELECT version, table_name, column_name, outcome, base, ours, theirs, ours_version FROM merge_notes
            WHERE key_id = ?\(table == nil ? "" : " AND table_name = ?") ORDER BY version, table_name, column_name
            """, arguments: StatementArguments([key] + (table.map { [$0] } ?? []))).map { row in
            try MergeNote(stored: row, version: row[0], table: row[1], key: key, column: row[2], from: 3)
        }
    }

    /// The notes `version` wrote with one of `outcomes`, in table order then key order, the first
    /// `limit` when given.
    package static func notes(version: Int, outcomes: [Outcome], limit: Int? = nil, _ db: Database) throws -> [MergeNote] {
        let tableOrder = MasterTable.all.enumerated().map { "WHEN '\($0.element.name)' THEN \($0.offset)" }.joined(separator: " ")
        return try Row.fetchAll(db, sql: """
            SELECT table_name, key_id, column_name, outcome, base, ours, theirs, ours_version FROM merge_notes
            WHERE version = ? AND outcome IN (\(outcomes.map { "'\($0.rawValue)'" }.joined(separator: ", ")))
            ORDER BY CASE table_name \(tableOrder) END, length(key_id), key_id, column_name\(limit.map { " LIMIT \($0)" } ?? "")
            """, arguments: [version]).map { row in
            try MergeNote(stored: row, version: version, table: row[0], key: row[1], column: row[2], from: 3)
        }
    }

    /// Notes store each value as its JSON text, so that a number stays a number.
    package static func encodeValue(_ value: MergeValue) -> String {
        String(decoding: (try? JSONEncoder().encode(value)) ?? Data("null".utf8), as: UTF8.self)
    }

    /// A note as `merge_notes` stores it: `outcome, base, ours, theirs, ours_version` from column
    /// `first` of `row` on.
    /// - Throws: `MergeNoteError.unreadable` for an outcome or value that is not a note's: a
    ///   damaged row is told, never read as NULL or as "kept".
    private init(stored row: Row, version: Int, table: String, key: String, column: String, from first: Int) throws {
        func unreadable(_ field: String, _ text: String?) -> MergeNoteError {
            MergeNoteError.unreadable(version: version, table: table, key: key, column: column, field: field, text: text ?? "NULL")
        }
        let outcomeText: String? = row[first]
        guard let outcome = outcomeText.flatMap(Outcome.init(rawValue:)) else { throw unreadable("outcome", outcomeText) }
        var values: [MergeValue] = []
        for (offset, field) in ["base", "ours", "theirs"].enumerated() {
            let text: String? = row[first + 1 + offset]
            guard let text else { values.append(.null); continue }
            guard let value = try? JSONDecoder().decode(MergeValue.self, from: Data(text.utf8)) else { throw unreadable(field, text) }
            values.append(value)
        }
        self.init(version: version, table: table, key: key, column: column, outcome: outcome, base: values[0], ours: values[1],
                  theirs: values[2], oursVersion: row[first + 4])
    }
}

/// A `merge_notes` row that is not a note (a damaged or hand-edited master).
public enum MergeNoteError: Error, LocalizedError, Equatable {
    /// The note of `version` on `table` `key` `column` holds `text` in `field`, which no note holds.
    case unreadable(version: Int, table: String, key: String, column: String, field: String, text: String)

    public var errorDescription: String? {
        switch self {
        case let .unreadable(version, table, key, column, field, text):
            return "merge_notes of version \(version), \(table) \(key) \(column): \(field) is \(text.quotedForMessage()), "
                + "which is not a merge note's (expected a JSON value, or an outcome kept, ours, theirs or adopted); "
                + "the master was edited by hand or is damaged: restore it from a backup"
        }
    }
}
