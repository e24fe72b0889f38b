import GRDB
import GRDBSQLite
import StationManifest
import StationSchema
import StationSupport

/// The findings of the newest version, kept with the master (curator data, never published)
/// so that the next import or plan learns what it introduces without rebuilding the version
/// before it from the history (a rebuild that was most of a 1M import),
/// and checks only the rows it changed (`CheckScope`).
///
/// Only the newest version's set is kept, under the default limits (those of every import),
/// with the rules that made it: a set made by other rules is not carried forward. The set of the
/// version before it is kept too (`recorded_findings_before`), so that a review of the newest
/// version tells what it introduced without rebuilding the version before and checking it again.
package enum RecordedFindings {
    /// The rules a set was made under; a binary with other rules checks every row again.
    package static let rules = "\(revision):" + CheckRule.allCases.map(\.rawValue).joined(separator: ",")
    /// Raise it when a rule comes to find other rows under the same name, or a recorded set
    /// made by the old rule would be carried forward as if the new one had made it.
    private static let revision = 1

    /// The identities recorded for `version`, or nil when that version's set is not recorded
    /// (a master written before the table existed, a version after which none was recorded, or
    /// a set made under other rules).
    package static func identities(_ db: Database, version: Int) throws -> Set<FindingIdentity>? {
        guard try isRecorded(version, db) else { return nil }
        var identities = Set<FindingIdentity>()
        let rows = try Row.fetchCursor(db, sql: "SELECT rule, table_name, key_id FROM recorded_findings")
        while let row = try rows.next() { identities.insert(FindingIdentity(rule: row[0], table: row[1], key: row[2])) }
        return identities
    }

    /// How many findings of each rule `version`'s recorded set holds, waived (by today's
    /// waivers) or not, counted in SQL: a million findings are never read into memory (as a set
    /// of identities they would be hundreds of MiB). Nil as `identities`.
    ///
    /// Grouped by rule alone, the waived ones summed: the set's key starts with the rule, so the
    /// rows come grouped already. Grouped by rule and waived, SQLite sorted every finding (at a
    /// million stations, 42,592 of them: two sorter threads and their temporary files, after
    /// every import).
    package static func counts(_ db: Database, version: Int) throws -> [(rule: String, waived: Bool, count: Int)]? {
        guard try isRecorded(version, db) else { return nil }
        let waived = try db.tableExists("waivers")
            ? "EXISTS (SELECT 1 FROM waivers w WHERE w.rule = r.rule AND w.table_name = r.table_name AND w.key_id = r.key_id)"
            : "0"
        return try Row.fetchAll(db, sql: "SELECT r.rule, SUM(\(waived)), COUNT(*) FROM recorded_findings r GROUP BY r.rule ORDER BY r.rule")
            .flatMap { row -> [(rule: String, waived: Bool, count: Int)] in
                let rule: String = row[0], waived: Int = row[1], all: Int = row[2]
                return [(rule, false, all - waived), (rule, true, waived)].filter { $0.count > 0 }
            }
    }

    /// Whether the recorded set is `version`'s, made under this binary's rules.
    package static func isRecorded(_ version: Int, _ db: Database) throws -> Bool {
        try isStamped(version, "recorded_findings", db)
    }

    /// Whether the set kept beside the newest version's is `version`'s (the version before the
    /// newest), made under this binary's rules.
    package static func isRecordedBefore(_ version: Int, _ db: Database) throws -> Bool {
        try isStamped(version, before, db)
    }

    /// The identities kept as `version`'s set beside the newest version's, or nil when they are
    /// not `version`'s.
    package static func identitiesBefore(_ db: Database, version: Int) throws -> Set<FindingIdentity>? {
        guard try isRecordedBefore(version, db) else { return nil }
        return Set(try Row.fetchAll(db, sql: "SELECT rule, table_name, key_id FROM \(before)")
            .map { FindingIdentity(rule: $0[0], table: $0[1], key: $0[2]) })
    }

    private static let before = "recorded_findings_before"

    private static func isStamped(_ version: Int, _ table: String, _ db: Database) throws -> Bool {
        guard try db.tableExists(table),
              let recorded = try Row.fetchOne(db, sql: "SELECT version, rules FROM \(table)_version")
        else { return false }
        return recorded[0] as Int == version && recorded[1] as String? == rules
    }

    /// Makes the recorded set `version`'s, and only `found` (a version's whole set, gathered as
    /// its findings streamed by); the version before's set is `before` (none for a first version).
    package static func replaceAll(version: Int, with found: FindingIdentityTable, before: FindingIdentityTable?, _ db: Database) throws {
        guard try db.tableExists("recorded_findings") else { return }
        try found.flush()
        if try db.tableExists(Self.before) {
            try before?.flush()
            try db.execute(sql: "DELETE FROM \(Self.before)")
            if let before {
                try db.execute(sql: "INSERT OR IGNORE INTO \(Self.before) (rule, table_name, key_id) SELECT rule, table_name, key_id FROM \(before.name)")
            }
            try stamp(version - 1, Self.before, db)
        }
        try db.execute(sql: "DELETE FROM recorded_findings")
        try db.execute(sql: "INSERT OR IGNORE INTO recorded_findings (rule, table_name, key_id) SELECT rule, table_name, key_id FROM \(found.name)")
        try stamp(version, "recorded_findings", db)
    }

    /// Makes the recorded set `version`'s: the findings of the rows in `CheckScope` replaced by
    /// those of `found` (the scope's findings, gathered while the recorded set was still the
    /// version before's), the rest carried over.
    package static func carryForward(to version: Int, replacingScopeWith found: FindingIdentityTable, _ db: Database) throws {
        try found.flush()
        if try db.tableExists(before) {
            try db.execute(sql: "DELETE FROM \(before); INSERT INTO \(before) SELECT rule, table_name, key_id FROM recorded_findings")
            try stamp(version - 1, before, db)
        }
        try db.execute(sql: "DELETE FROM recorded_findings WHERE \(CheckScope.foundAfresh)")
        try db.execute(sql: "INSERT OR IGNORE INTO recorded_findings (rule, table_name, key_id) SELECT rule, table_name, key_id FROM \(found.name)")
        try stamp(version, "recorded_findings", db)
    }

    /// Marks `table`'s set as `version`'s, under this binary's rules.
    private static func stamp(_ version: Int, _ table: String, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM \(table)_version")
        try db.execute(sql: "INSERT INTO \(table)_version (version, rules) VALUES (?, ?)", arguments: [version, rules])
    }
}

/// A table of finding identities (`rule`, `table_name`, `key_id`), added to and probed one
/// finding at a time as the findings stream: the recorded set, or a temp table of a version's.
///
/// Added to a batch of rows per statement, bound through SQLite's C API: a statement per
/// finding, with GRDB's arguments, spent most of the time of recording 977,745 findings in
/// stepping statements and building argument arrays.
package final class FindingIdentityTable {
    /// The table, schema-qualified.
    package let name: String
    private let db: Database
    private let insert: Statement
    private let insertBatch: Statement
    private let probe: Statement?
    private var pending: [FoundRow] = []
    private static let batchSize = 128

    /// A new temp table `name` (replacing one of that name). One that is only `appended` to
    /// has no key: each insert is then an append, and the set is copied into a keyed table in
    /// one statement, rather than each finding inserted into the recorded set's key one at a time.
    package static func temporary(_ db: Database, name: String, appended: Bool = false) throws -> FindingIdentityTable {
        try db.execute(sql: """
            DROP TABLE IF EXISTS temp.\(name);
            CREATE TEMP TABLE \(name) (rule TEXT NOT NULL, table_name TEXT NOT NULL, key_id TEXT NOT NULL\(appended
                ? ")" : ", PRIMARY KEY (rule, table_name, key_id)) WITHOUT ROWID");
            """)
        return try FindingIdentityTable(db, name: "temp.\(name)", probed: !appended)
    }

    /// A new temp table `name` holding the identities of every finding `checker` finds.
    package static func gathered(_ db: Database, name: String, from checker: DataChecker) throws -> FindingIdentityTable {
        let table = try temporary(db, name: name)
        try checker.forEachFinding(db) { found, _ in try table.add(found) }
        try table.flush()
        return table
    }

    /// The recorded set (`main.recorded_findings`), as it stands.
    package static func recorded(_ db: Database) throws -> FindingIdentityTable {
        try FindingIdentityTable(db, name: "main.recorded_findings")
    }

    /// The set kept beside the recorded one: the version before's (`RecordedFindings.isRecordedBefore`).
    package static func recordedBefore(_ db: Database) throws -> FindingIdentityTable {
        try FindingIdentityTable(db, name: "main.recorded_findings_before")
    }

    fileprivate init(_ db: Database, name: String, probed: Bool = true) throws {
        self.name = name
        self.db = db
        let insert = "INSERT\(probed ? " OR IGNORE" : "") INTO \(name) (rule, table_name, key_id) VALUES "
        self.insert = try db.makeStatement(sql: insert + "(?, ?, ?)")
        insertBatch = try db.makeStatement(sql: insert + Array(repeating: "(?, ?, ?)", count: Self.batchSize).joined(separator: ", "))
        probe = try probed ? db.makeStatement(sql: "SELECT 1 FROM \(name) WHERE rule = ? AND table_name = ? AND key_id = ?") : nil
    }

    package func add(_ found: FoundRow) throws {
        pending.append(found)
        guard pending.count == Self.batchSize else { return }
        let handle = insertBatch.sqliteStatement
        sqlite3_reset(handle)
        for (index, row) in pending.enumerated() { bind(row, to: handle, from: Int32(index * 3)) }
        try StatementBinding.step(insertBatch, db)
        pending.removeAll(keepingCapacity: true)
    }

    /// Writes the rows still held for a batch: before the table is read by SQL.
    package func flush() throws {
        for row in pending {
            sqlite3_reset(insert.sqliteStatement)
            bind(row, to: insert.sqliteStatement, from: 0)
            try StatementBinding.step(insert, db)
        }
        pending.removeAll()
    }

    package func contains(_ found: FoundRow) throws -> Bool {
        guard let probe else { preconditionFailure("\(name) is only appended to") }
        try flush()
        sqlite3_reset(probe.sqliteStatement)
        bind(found, to: probe.sqliteStatement, from: 0)
        let code = sqlite3_step(probe.sqliteStatement)
        guard code == SQLITE_ROW || code == SQLITE_DONE else { throw StatementBinding.lastError(probe, db) }
        sqlite3_reset(probe.sqliteStatement)
        return code == SQLITE_ROW
    }

    /// Drops a temp table; the master's tables are kept.
    package func drop() throws {
        if name.hasPrefix("temp.") { try db.execute(sql: "DROP TABLE IF EXISTS \(name)") }
    }

    /// Binds the identity to parameters `offset + 1` to `offset + 3`.
    private func bind(_ found: FoundRow, to handle: SQLiteStatement, from offset: Int32) {
        StatementBinding.bind(text: found.rule.rawValue, at: offset + 1, handle)
        StatementBinding.bind(text: found.table.name, at: offset + 2, handle)
        StatementBinding.bind(text: found.key, at: offset + 3, handle)
    }
}
