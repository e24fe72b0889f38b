import GRDB

/// The findings of the newest version, kept with the master (curator data, never published)
/// so that the next import or plan learns what it introduces without rebuilding the version
/// before it from the history (at a million stations that rebuild cost 25 s of a 58 s import),
/// and checks only the rows it changed (`CheckScope`).
///
/// Only the newest version's set is kept, under the default limits (those of every import),
/// with the rules that made it: a set made by other rules is not carried forward.
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
    /// of identities they were 150 MiB and 1.3 s of an import's last line). Nil as `identities`.
    package static func counts(_ db: Database, version: Int) throws -> [(rule: String, waived: Bool, count: Int)]? {
        guard try isRecorded(version, db) else { return nil }
        let waived = try db.tableExists("waivers")
            ? "EXISTS (SELECT 1 FROM waivers w WHERE w.rule = r.rule AND w.table_name = r.table_name AND w.key_id = r.key_id)"
            : "0"
        return try Row.fetchAll(db, sql: "SELECT r.rule, \(waived), COUNT(*) FROM recorded_findings r GROUP BY 1, 2")
            .map { (rule: $0[0], waived: $0[1], count: $0[2]) }
    }

    /// Whether the recorded set is `version`'s, made under this binary's rules.
    private static func isRecorded(_ version: Int, _ db: Database) throws -> Bool {
        guard try db.tableExists("recorded_findings"),
              let recorded = try Row.fetchOne(db, sql: "SELECT version, rules FROM recorded_findings_version")
        else { return false }
        return recorded[0] as Int == version && recorded[1] as String? == rules
    }

    /// Replaces the recorded set with `findings` of `version`.
    package static func record(_ findings: [CheckFinding], version: Int, _ db: Database) throws {
        guard try db.tableExists("recorded_findings") else { return }
        try db.execute(sql: "DELETE FROM recorded_findings")
        try insert(findings, version: version, db)
    }

    /// Makes the recorded set `version`'s: the findings of the rows in `CheckScope` replaced by
    /// `found`, the rest carried over from the version before.
    package static func carryForward(to version: Int, replacingScopeWith found: [CheckFinding], _ db: Database) throws {
        try db.execute(sql: "DELETE FROM recorded_findings WHERE \(CheckScope.foundAfresh)")
        try insert(found, version: version, db)
    }

    private static func insert(_ findings: [CheckFinding], version: Int, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM recorded_findings_version")
        try db.execute(sql: "INSERT INTO recorded_findings_version (version, rules) VALUES (?, ?)", arguments: [version, rules])
        let insert = try db.makeStatement(sql: "INSERT OR IGNORE INTO recorded_findings (rule, table_name, key_id) VALUES (?, ?, ?)")
        for finding in findings {
            try insert.execute(arguments: [finding.rule.rawValue, finding.table, finding.key])
        }
    }
}
