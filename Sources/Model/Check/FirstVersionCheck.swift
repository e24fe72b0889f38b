import Foundation
import GRDB
import GRDBSQLite
import StationSchema
import StationSQLite
import StationSupport

/// The rules over a first version, run on another core while the writing connection writes
/// the version's log rows.
///
/// A first version is checked whole, and its rows are uncommitted: no other connection of the
/// master sees them (WAL shows a reader the last commit). So the checker reads a private copy:
/// the master's pages as the writing connection sees them (`sqlite3_serialize`, a page copy,
/// not a row read), opened in memory on its own connection: the writer pays for a copy of
/// pages, and the rules, which read every row, run beside the log's writing. What the rules
/// find is what `VersionChecks.introducedFindings` finds on the master itself: the same
/// `DataChecker` over the same pages, so nothing here is a second form of a rule.
///
/// Only when every row of the version is in the master tables before the log is written (each
/// file loaded straight into its empty table: `PendingVersion.holdsEveryRowInTheMaster`), and
/// when the copy is at most `largestCopy` bytes: it lives in memory while the rules run.
package final class FirstVersionCheck: Sendable {
    /// What the rules found: the findings a report shows, and every finding's identity to record.
    package struct Outcome: Sendable {
        package var introduced: IntroducedFindings
        package var found: PackedFindings
    }

    /// The largest master copied: the copy is held in memory beside what the import holds, and
    /// a larger first version is checked on the writing connection, as before, within the
    /// import's memory target (512 MiB).
    package static let largestCopy = 512 << 20

    private let task: BackgroundTask<Outcome>

    /// Copies the master as `db` sees it and starts the rules of the first version on the copy;
    /// nil when the copy would be larger than `largestCopy`, or cannot be made (no memory for
    /// it): the caller checks on the master then.
    package static func start(_ db: Database, _ declared: DeclaredSchema) throws -> FirstVersionCheck? {
        let pages = try Int.fetchOne(db, sql: "PRAGMA main.page_count") ?? 0
        let pageSize = try Int.fetchOne(db, sql: "PRAGMA main.page_size") ?? 4096
        guard pages * pageSize <= largestCopy else { return nil }
        let waived = try Waivers.identities(db)
        var size: sqlite3_int64 = 0
        guard let bytes = sqlite3_serialize(db.sqliteConnection, "main", &size, 0) else { return nil }
        guard size >= 100 else {
            sqlite3_free(bytes)
            return nil
        }
        // A copy of a WAL file says WAL in its header (bytes 18 and 19), which a database in
        // memory cannot be: it is read as a rollback-journal file.
        bytes[18] = 1
        bytes[19] = 1
        let copy = SerializedDatabase(bytes: bytes, size: size)
        return FirstVersionCheck(task: BackgroundTask { try check(copy, declared, waived: waived) })
    }

    private init(task: BackgroundTask<Outcome>) {
        self.task = task
    }

    /// What the rules found, once they are done.
    package func wait() throws -> Outcome {
        try task.wait()
    }

    /// Every row of a first version is written under the master's CHECKs: `valueOutsideDomain`
    /// is spared, as `VersionChecks.introducedFindings` spares it.
    private static func check(_ copy: SerializedDatabase, _ declared: DeclaredSchema, waived: Set<FindingIdentity>) throws -> Outcome {
        let queue = try DatabaseQueue(configuration: SQLiteDefences.configuration())
        defer { try? queue.close() }
        var outcome = Outcome(introduced: IntroducedFindings(), found: PackedFindings())
        try queue.inDatabase { db in
            // The copy's bytes are SQLite's from here on: freed when the connection closes.
            let code = sqlite3_deserialize(db.sqliteConnection, "main", copy.bytes, copy.size, copy.size,
                                           UInt32(SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY))
            guard code == SQLITE_OK else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "could not open the master's copy for its checks")
            }
            db.clearSchemaCache()
            var rules = Set(CheckRule.allCases)
            rules.remove(.valueOutsideDomain)
            try DataChecker(version: 1, newest: 1, limits: CheckLimits(), declared: declared).forEachFinding(db, rules: rules) { row, message in
                outcome.found.append(row)
                outcome.introduced.add(row, waived: Waivers.accept(row, among: waived), message: message)
            }
        }
        return outcome
    }
}

/// The bytes `sqlite3_serialize` made, handed to the thread that opens them once: unchecked
/// `Sendable`, as a pointer is, with one owner at a time.
private struct SerializedDatabase: @unchecked Sendable {
    let bytes: UnsafeMutablePointer<UInt8>
    let size: sqlite3_int64
}

/// Finding identities in one buffer (a rule, a table, a key and a NUL each): a million
/// findings of a broken export are 25 MB here, where as `FoundRow`s they would be 100.
package struct PackedFindings: Sendable {
    private var bytes: [UInt8] = []
    package private(set) var count = 0

    package init() {}

    mutating func append(_ row: FoundRow) {
        bytes.append(UInt8(Self.rules.firstIndex(of: row.rule)!))
        bytes.append(UInt8(MasterTable.all.firstIndex(of: row.table)!))
        bytes.append(contentsOf: row.key.utf8)
        bytes.append(0)
        count += 1
    }

    /// Each finding, in the order they were appended.
    package func forEach(_ body: (FoundRow) throws -> Void) rethrows {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let rule = Self.rules[Int(bytes[index])]
            let table = MasterTable.all[Int(bytes[index + 1])]
            let end = bytes[(index + 2)...].firstIndex(of: 0)!
            try body(FoundRow(rule: rule, table: table, key: String(decoding: bytes[(index + 2)..<end], as: UTF8.self)))
            index = end + 1
        }
    }

    private static let rules = CheckRule.allCases
}
