import Foundation
import GRDB
import StationSchema
import StationSupport

/// A curator's acceptance of one finding: one rule for one row, with the reason.
///
/// Curator data kept in the master (table `waivers`), never published and not versioned:
/// waiving changes what `check` and `release` say, not what a phone receives.
public struct Waiver: Codable, Sendable, Equatable, FetchableRecord {
    /// The rule waived (`connection-too-long`).
    public var rule: String
    /// The master table of the row.
    public var table: String
    /// The row's key as in `updates.key_id`.
    public var key: String
    /// Why the curator accepts it, for the next curator.
    public var reason: String
    /// Who waived it (`--author` or `STATION_ADMIN_AUTHOR`), when known.
    public var author: String?
    /// When, as an ISO 8601 timestamp.
    public var waivedAt: String
    /// Whether the rule still finds something for the row at the newest version (`check` fills it).
    public var stillFound: Bool?

    /// A waiver from its row of the `waivers` table.
    public init(row: Row) {
        rule = row["rule"]; table = row["table_name"]; key = row["key_id"]
        reason = row["reason"]; author = row["author"]; waivedAt = row["waived_at"]
    }

    /// The finding it accepts.
    public var identity: FindingIdentity { FindingIdentity(rule: rule, table: table, key: key) }

    package enum CodingKeys: String, CodingKey {
        case rule, table, key, reason, author
        case waivedAt = "waived_at", stillFound = "still_found"
    }

    /// Every key, null for no value (docs/json.md).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(rule, forKey: .rule)
        try container.encode(table, forKey: .table)
        try container.encode(key, forKey: .key)
        try container.encode(reason, forKey: .reason)
        try container.encode(author, forKey: .author)
        try container.encode(waivedAt, forKey: .waivedAt)
        try container.encode(stillFound, forKey: .stillFound)
    }
}

/// A waiver `waive` or `unwaive` refuses, with the nearest valid name.
public enum WaiverError: Error, LocalizedError, Equatable {
    case unknownRule(String, suggestion: String?)
    case unknownTable(String)
    case wrongTable(rule: String, table: String, expected: [String])
    case badKey(table: String, key: String)
    case noSuchRow(table: String, key: String)
    case notFound(FindingIdentity)
    case emptyReason
    case notWaived(FindingIdentity)

    public var errorDescription: String? {
        switch self {
        case let .unknownRule(rule, suggestion):
            return "unknown rule \(rule.quotedForMessage())" + (suggestion.map { " (did you mean \($0)? " } ?? " (")
                + "expected one of: \(CheckRule.allCases.map(\.rawValue).joined(separator: ", ")))"
        case let .unknownTable(table):
            return "unknown table \(table.quotedForMessage()) (expected one of: \(MasterTable.all.map(\.name).joined(separator: ", ")))"
        case let .wrongTable(rule, table, expected):
            return "\(rule) checks \(expected.joined(separator: " and ")), not \(table) (waive it on a row of \(expected.joined(separator: " or ")))"
        case let .badKey(table, key):
            let columns = MasterTable.named(table)?.keyColumns.joined(separator: "/") ?? "the key"
            return "\(key.quotedForMessage()) is not a key of \(table) (expected \(columns), whole numbers, as `check` prints it)"
        case let .noSuchRow(table, key):
            return "\(table) \(key) does not exist (check the key with `\(CommandHint("log", "--key", key))`; for a row a plan is about to add, waive it with --ahead)"
        case let .notFound(identity):
            return "\(identity.rule) finds nothing on \(identity.table) \(identity.key) today, so there is nothing to waive (`\(CommandHint("check"))` lists the findings; to accept a finding a plan is about to bring, add --ahead)"
        case .emptyReason:
            return "a waiver needs a reason (--reason \"the 59 km Seikan Tunnel edge is real\")"
        case let .notWaived(identity):
            return "no waiver for \(identity.rule) on \(identity.table) \(identity.key) (\(CommandHint("check")) lists the waivers)"
        }
    }
}

package enum Waivers {
    package static func identities(_ db: Database) throws -> Set<FindingIdentity> {
        Set(try all(db).map(\.identity))
    }

    /// Whether `found` is one of `waived`: most masters have few waivers or none, and a
    /// million findings then build no identity to look up in none.
    package static func accept(_ found: FoundRow, among waived: Set<FindingIdentity>) -> Bool {
        !waived.isEmpty && waived.contains(found.identity)
    }

    package static func all(_ db: Database) throws -> [Waiver] {
        // A master of an older StationAdmin gets the table on its next write; until then it has none.
        guard try db.tableExists("waivers") else { return [] }
        return try Waiver.fetchAll(db, sql: "SELECT * FROM waivers ORDER BY rule, table_name, CAST(key_id AS INTEGER), key_id")
    }
}

extension Checker {
    /// Accepts the finding of `rule` on one row of a table the rule checks. The row must exist
    /// and the rule must find it at the newest version, unless `ahead`: a curator may accept a
    /// known long edge before the plan or import that brings it.
    public func waive(rule: String, table: String, key: String, reason: String, ahead: Bool = false) throws {
        guard let rule = CheckRule(rawValue: rule) else {
            throw WaiverError.unknownRule(rule, suggestion: NearestName.nearest(to: rule, among: CheckRule.allCases.map(\.rawValue)))
        }
        guard let masterTable = MasterTable.named(table) else { throw WaiverError.unknownTable(table) }
        guard rule.tables.contains(masterTable) else {
            throw WaiverError.wrongTable(rule: rule.rawValue, table: table, expected: rule.tables.map(\.name))
        }
        // As `check` prints keys (`updates.key_id`): a waiver of "+5" or "05" would match nothing.
        let parts = key.split(separator: "/", omittingEmptySubsequences: false).compactMap { part in
            Int64(part).flatMap { String($0) == part ? $0 : nil }
        }
        guard parts.count == masterTable.keyColumns.count, key.split(separator: "/", omittingEmptySubsequences: false).count == parts.count else {
            throw WaiverError.badKey(table: table, key: key)
        }
        let reason = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty else { throw WaiverError.emptyReason }
        if !ahead {
            // The row, then the one rule's findings, in one state of the master.
            let identity = FindingIdentity(rule: rule.rawValue, table: table, key: key)
            try master.readingOneState { db in
                let exists = try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM \(masterTable.name) WHERE \(masterTable.keyColumns.map { "\($0) = ?" }.joined(separator: " AND ")))",
                    arguments: StatementArguments(parts)) ?? false
                guard exists else { throw WaiverError.noSuchRow(table: table, key: key) }
                let newest = try MasterDatabase.dataVersion(db)
                var found = false
                try DataChecker(version: newest, newest: newest, limits: CheckLimits(), declared: master.declared).forEachFinding(db, rules: [rule]) { row, _ in
                    if row.identity == identity { found = true }
                }
                guard found else { throw WaiverError.notFound(identity) }
            }
        }
        try master.write { db in
            // The reason by its byte length (StatementBinding's text rule).
            try StatementBinding.execute("""
                INSERT INTO waivers (rule, table_name, key_id, reason, author, waived_at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (rule, table_name, key_id) DO UPDATE SET reason = excluded.reason, author = excluded.author,
                    waived_at = excluded.waived_at
                """, [rule.rawValue, table, key, reason, master.author, UTCTimestamp.text(Date())], db)
            return ((), true)
        }
    }

    /// Withdraws a waiver: the finding counts again.
    ///
    /// - Throws: `WaiverError` when no such waiver exists.
    public func unwaive(rule: String, table: String, key: String) throws {
        try master.write { db in
            try db.execute(sql: "DELETE FROM waivers WHERE rule = ? AND table_name = ? AND key_id = ?", arguments: [rule, table, key])
            guard db.changesCount > 0 else { throw WaiverError.notWaived(FindingIdentity(rule: rule, table: table, key: key)) }
            return ((), true)
        }
    }

    /// Every waiver, each saying whether a streamed check found its row (nil for a waiver of a
    /// rule that check did not run).
    public func waivers(checked outcome: CheckOutcome) throws -> [Waiver] {
        try master.read { db in
            try Waivers.all(db).map { waiver in
                var waiver = waiver
                waiver.stillFound = CheckRule(rawValue: waiver.rule).map(outcome.rules.contains) == true
                    ? outcome.waiversMet.contains(waiver.identity) : nil
                return waiver
            }
        }
    }

    /// Every waiver, each saying whether its rule still finds the row at the newest version.
    public func waivers(findings: CheckReport? = nil) throws -> [Waiver] {
        let found = findings.map { Set($0.findings.map(\.identity)) }
        return try master.read { db in
            try Waivers.all(db).map { waiver in
                var waiver = waiver
                waiver.stillFound = found.map { $0.contains(waiver.identity) }
                return waiver
            }
        }
    }
}
