import GRDB

/// The findings of the newest version, kept with the master (curator data, never published)
/// so that the next import or plan learns what it introduces without rebuilding the version
/// before it from the history: at a million stations that rebuild cost 25 s of a 58 s import.
///
/// Only the newest version's set is kept, under the default limits (those of every import).
enum RecordedFindings {
    /// The identities recorded for `version`, or nil when that version's set is not recorded
    /// (a master written before the table existed, or a version after which none was recorded).
    static func identities(_ db: Database, version: Int) throws -> Set<FindingIdentity>? {
        guard try db.tableExists("recorded_findings"),
              try Int.fetchOne(db, sql: "SELECT version FROM recorded_findings_version") == version
        else { return nil }
        var identities = Set<FindingIdentity>()
        let rows = try Row.fetchCursor(db, sql: "SELECT rule, table_name, key_id FROM recorded_findings")
        while let row = try rows.next() { identities.insert(FindingIdentity(rule: row[0], table: row[1], key: row[2])) }
        return identities
    }

    /// Replaces the recorded set with `findings` of `version`.
    static func record(_ findings: [CheckFinding], version: Int, _ db: Database) throws {
        guard try db.tableExists("recorded_findings") else { return }
        try db.execute(sql: "DELETE FROM recorded_findings; DELETE FROM recorded_findings_version")
        try db.execute(sql: "INSERT INTO recorded_findings_version (version) VALUES (?)", arguments: [version])
        let insert = try db.makeStatement(sql: "INSERT OR IGNORE INTO recorded_findings (rule, table_name, key_id) VALUES (?, ?, ?)")
        for finding in findings {
            try insert.execute(arguments: [finding.rule.rawValue, finding.table, finding.key])
        }
    }
}
