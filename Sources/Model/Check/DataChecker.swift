import Foundation
import GRDB
import GRDBSQLite
import StationHistory
import StationSchema
import StationSupport

/// A finding as a rule hands it over: what identifies it, with its words made only when the
/// handler asks for them. An import shows the first twenty of each rule: a message built for each
/// of a million findings would cost seconds and hundreds of MiB.
package struct FoundRow: Sendable {
    package let rule: CheckRule
    package let table: MasterTable
    /// As `updates.key_id` (`1120101`, `11302/1130201/1130202`).
    package let key: String

    package init(rule: CheckRule, table: MasterTable, key: String) {
        self.rule = rule
        self.table = table
        self.key = key
    }

    package var identity: FindingIdentity { FindingIdentity(rule: rule.rawValue, table: table.name, key: key) }

    package func finding(_ message: String) -> CheckFinding { CheckFinding(rule, table, key: key, message) }
}

/// Takes each finding, in the order `check` lists them (errors first, then rule, table and key),
/// and its message when it calls `message`, before it returns.
package typealias FindingHandler = (_ found: FoundRow, _ message: () -> String) throws -> Void

/// Runs the rules of `CheckRule` over one version's rows.
///
/// The newest version is the master tables themselves; an older one is rebuilt from the
/// history (`VersionedState`) as common table expressions named like the tables, which the
/// rules' SQL then reads unchanged.
///
/// The findings stream: each rule reads its rows in key order and hands each finding over as it
/// finds it, and the rules run in the order findings are listed, so nothing is sorted or held.
package struct DataChecker {
    package let version: Int
    package let newest: Int
    package let limits: CheckLimits
    /// When set (the newest version only), each rule finds what it finds on the rows in scope alone.
    package var scope: CheckScope? = nil
    /// The tables whose columns' domains are checked.
    package let declared: DeclaredSchema

    package init(version: Int, newest: Int, limits: CheckLimits, scope: CheckScope? = nil, declared: DeclaredSchema) {
        self.declared = declared
        self.version = version
        self.newest = newest
        self.limits = limits
        self.scope = scope
    }

    static let closed = MasterTable.closedStatus

    /// The rules in the order their findings are listed: errors first, then as `CheckRule` declares them.
    package static let listingOrder: [CheckRule] = CheckRule.allCases.enumerated()
        .sorted { ($0.element.severity == .error ? 0 : 1, $0.offset) < ($1.element.severity == .error ? 0 : 1, $1.offset) }
        .map(\.element)

    /// Hands each finding of `rules` to `handler` in listing order, as the rules find them.
    package func forEachFinding(_ db: Database, rules: Set<CheckRule> = Set(CheckRule.allCases), _ handler: FindingHandler) throws {
        precondition(scope == nil || version == newest, "a scope is the newest version's")
        if version < newest { try materializeState(db) }
        defer { if version < newest { try? dropState(db) } }
        try withoutActuallyEscaping(handler) { handler in
            let out = FindingOutput(handler)
            var oddEnds: [OddEnds]?
            var moves: [StationMove]?
            for rule in Self.listingOrder where rules.contains(rule) {
                switch rule {
                case .openUnderClosed: try openUnderClosed(db, out)
                case .datesOutOfOrder: try datesOutOfOrder(db, out)
                case .coordinatesOutsideJapan: try coordinatesOutsideJapan(db, out)
                case .valueOutsideDomain: try valuesOutsideDomain(db, out)
                case .closedWithoutDate: try closedWithoutDate(db, out)
                case .connectionTooLong:
                    oddEnds = try connections(db, tooLong: out, collectingOddEnds: !rules.isDisjoint(with: [.connectionToClosedStation, .connectionOffItsLine]))
                // One reading of the moved stations serves both rules: each move is one or the other.
                case .stationMovedImplausibly, .stationMovedFar:
                    let read = try moves ?? stationMoves(db)
                    moves = read
                    try report(read, as: rule, out)
                case .kanaNotKatakana: try kanaNotKatakana(db, out)
                case .groupDangling: try groupsDangling(db, out)
                case .duplicateNameOnLine: try duplicateNamesOnLines(db, out)
                case .lineWithoutStations: try linesWithoutStations(db, out)
                case .sourceDisagrees: try sourcesDisagreeing(db, out)
                case .connectionToClosedStation:
                    let ends = try oddEnds ?? connections(db, tooLong: nil, collectingOddEnds: true)
                    oddEnds = ends
                    try connectionsToClosedStations(ends, out)
                case .connectionOffItsLine:
                    let ends = try oddEnds ?? connections(db, tooLong: nil, collectingOddEnds: true)
                    oddEnds = ends
                    try connectionsOffTheirLines(ends, out)
                }
            }
        }
    }

    private static let stateTables = [MasterTable.companies, .lines, .stations, .connections]

    /// An older version's rows, rebuilt from the history once for all the rules, not by each
    /// rule again. The caller's connection must allow temp tables (a write, or
    /// `readingOneState`).
    private func materializeState(_ db: Database) throws {
        for table in Self.stateTables {
            try db.execute(sql: """
                DROP TABLE IF EXISTS temp.\(Self.stateTable(table));
                CREATE TEMP TABLE \(Self.stateTable(table)) AS \(VersionedState(table: declared[table], version: version).select());
                """)
        }
        // The lookups the rules' joins make, as the master's keys and indexes serve them at the newest version.
        let indexes: [(MasterTable, String, String)] = [
            (.stations, "by_code", "station_cd"), (.stations, "by_line", "line_cd, station_cd"),
            (.lines, "by_code", "line_cd"), (.companies, "by_code", "company_cd"),
            (.connections, "by_key", "line_cd, station_cd1, station_cd2"),
        ]
        for (table, name, columns) in indexes {
            try db.execute(sql: "CREATE INDEX temp.\(Self.stateTable(table))_\(name) ON \(Self.stateTable(table)) (\(columns))")
        }
    }

    private func dropState(_ db: Database) throws {
        for table in Self.stateTables { try db.execute(sql: "DROP TABLE IF EXISTS temp.\(Self.stateTable(table))") }
    }

    private static func stateTable(_ table: MasterTable) -> String { "checked_\(table.name)" }

    /// The rows of the tables a rule reads, as they were at `version`; SQL that names no
    /// table is given none.
    func state(for sql: String) -> String {
        guard version < newest else { return "" }
        let tables = Self.stateTables.filter {
            sql.range(of: "\\b\($0.name)\\b", options: .regularExpression) != nil
        }
        guard !tables.isEmpty else { return "" }
        // Not materialized: a copy per rule would copy the stations again for each, and SQLite would
        // copy a table named twice (`stations a`, `stations b`) unless told not to.
        return "WITH " + tables.map { "\($0.name) AS NOT MATERIALIZED (SELECT * FROM temp.\(Self.stateTable($0)))" }.joined(separator: ",\n") + "\n"
    }

    /// Each row of `sql` at this version, read with a cursor: a rule may scan a million rows.
    func forEachRow(_ db: Database, _ sql: String, arguments: StatementArguments = [], _ body: (Row) throws -> Void) throws {
        let cursor = try Row.fetchCursor(db.cachedStatement(sql: state(for: sql) + sql), arguments: arguments)
        while let row = try cursor.next() { try body(row) }
    }

    /// SQL: ` AND <column in scope>`, or nothing when every row is checked.
    func inScope(_ table: MasterTable, _ column: String) -> String {
        scope.map { " AND " + $0.contains(table, column) } ?? ""
    }

    /// SQL: ` AND <column of a row the version changed>`, for a rule of `CheckScope.rowLocal`.
    func changedInScope(_ table: MasterTable, _ column: String) -> String {
        scope.map { " AND " + $0.containsChanged(table, column) } ?? ""
    }

    func name(_ text: String) -> String { text.escapingControlCharacters }

    /// Six decimals, as ekidata writes coordinates (about 0.1 m).
    static func degrees(_ value: Double) -> String { String(format: "%.6f", value) }

    static func kilometres(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// A distance over `limit`, with as many decimals (one to three) as it takes to read as over
    /// it: 1.04 km against a limit of 1 km is "1.04", never "1.0".
    static func kilometres(_ value: Double, over limit: Double) -> String {
        for decimals in 1...3 {
            let text = String(format: "%.\(decimals)f", value)
            if let shown = Double(text), shown > limit { return text }
        }
        return String(format: "%.3f", value)
    }
}

/// Where a rule's findings go: the caller's handler, and (in debug builds) a check that they
/// come in listing order, which is what lets a caller stream them.
final class FindingOutput {
    private let handler: FindingHandler
    #if DEBUG
    private var last: (Int, Int, [Int64])?
    private static let ranks = Dictionary(uniqueKeysWithValues: DataChecker.listingOrder.enumerated().map { ($1, $0) })
    #endif

    init(_ handler: @escaping FindingHandler) { self.handler = handler }

    func found(_ rule: CheckRule, _ table: MasterTable, _ key: String, message: () -> String) throws {
        #if DEBUG
        let order = (Self.ranks[rule]!, MasterTable.all.firstIndex(of: table)!, KeyOrder(key).parts)
        if let last {
            precondition((last.0, last.1) < (order.0, order.1)
                || ((last.0, last.1) == (order.0, order.1) && last.2.lexicographicallyPrecedes(order.2)),
                "\(rule.rawValue) \(table.name) \(key) came out of listing order")
        }
        last = order
        #endif
        try handler(FoundRow(rule: rule, table: table, key: key), message)
    }
}

/// A key text in the order of its integer parts (`9/1` before `10/1`).
package struct KeyOrder: Comparable {
    package let parts: [Int64]
    package init(_ key: String) { parts = key.split(separator: "/").map { Int64($0) ?? 0 } }
    package static func < (a: KeyOrder, b: KeyOrder) -> Bool { a.parts.lexicographicallyPrecedes(b.parts) }
}
