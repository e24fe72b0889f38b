import GRDB
import PostgresNIO
import StationClientCore
import StationSQLite

/// What a `--baseline` was weighed with, as the report records it.
public enum BaselineEvidence: String, Codable, Sendable {
    /// The master tables' content hash equals the version's.
    case masterTables = "master-tables"
    /// The users' records agree with the splits at and below the version, and not above.
    case usersRecords = "users-records"
    /// No master tables and no user at any split's old station: nothing to weigh.
    case nothing
}

/// `--baseline N` weighed against the data before a split is copied, inside the sync's
/// transaction: a wrong baseline either never makes the copies of the splits it skips, or makes
/// again the ones already made (records users deleted come back). Where the schema holds master
/// tables, their content must be release N's (its signed content hash); else the users' records
/// are weighed against each split, and N is refused only when another version explains them
/// better: fewer users whose records disagree with it (a split at or below the version whose
/// old station's user lacks the new one, or one above it whose user has both). A user's own
/// record at a new station, or a copy the user deleted, is then one disagreement, not a verdict.
struct BaselineCheck: Sendable {
    let baseline: Int
    let schema: String
    let release: VerifiedRelease

    /// - Throws: `PostgresSyncError.baselineDisagrees`, naming what disagrees and the versions the data matches.
    func check(tables: [ClientTable], splitTables: [SplitCopy], _ server: ServerSession) async throws -> BaselineEvidence {
        if let hash = try await MasterTablesContent.hash(schema: schema, like: tables, server) {
            guard release.contentHashes[baseline] != hash else { return .masterTables }
            let matching = release.contentHashes.filter { $0.value == hash }.keys.sorted()
            let evidence = "the master tables in schema \(schema) hold content \(hash.prefix(12))…, "
                + (release.contentHashes[baseline].map { "version \(baseline)'s is \($0.prefix(12))…" } ?? "and the folder lists no version \(baseline)")
            throw PostgresSyncError.baselineDisagrees(baseline: baseline, evidence: [evidence],
                                                      matches: matching.isEmpty ? nil : "version " + matching.map(String.init).joined(separator: " and "))
        }
        return try await weighUsersRecords(splitTables, server)
    }

    /// Each split against the users' records: for every version, how many users' records disagree
    /// with it; the baseline stands unless another version has fewer.
    private func weighUsersRecords(_ splitTables: [SplitCopy], _ server: ServerSession) async throws -> BaselineEvidence {
        var weighed: [(split: ReleaseSplit, table: String, weight: SplitCopy.Weight)] = []
        for split in release.splits(after: 0) {
            for table in splitTables {
                let weight = try await table.weigh(split, server)
                if weight.withOld > 0 { weighed.append((split, table.table.table, weight)) }
            }
        }
        guard !weighed.isEmpty else { return .nothing }
        func disagreeing(_ version: Int) -> Int {
            weighed.reduce(0) { total, entry in
                total + (entry.split.version <= version ? entry.weight.withOld - entry.weight.withBoth : entry.weight.withBoth)
            }
        }
        let versions = Array(0...release.version), least = versions.map(disagreeing).min() ?? 0
        guard disagreeing(baseline) > least else { return .usersRecords }
        let evidence = weighed.compactMap { entry -> String? in
            let (split, weight) = (entry.split, entry.weight)
            let words = "\(weight.withBoth) of the \(weight.withOld) users of \(entry.table) with records at \(split.old) have records at \(split.new)"
            if split.version <= baseline && weight.withBoth < weight.withOld {
                return "version \(split.version)'s split \(split.old) → \(split.new) was never carried out for most (\(words))"
            }
            if split.version > baseline && weight.withBoth > 0 {
                return "version \(split.version)'s split \(split.old) → \(split.new) was carried out already (\(words))"
            }
            return nil
        } + ["\(disagreeing(baseline)) users' records disagree with version \(baseline), \(least) with the best"]
        let best = versions.filter { disagreeing($0) == least }
        let matches = best.count == 1 ? "version \(best[0])"
            : best.last! - best.first! == best.count - 1 ? "a version from \(best.first!) to \(best.last!)"
            : "version " + best.map(String.init).joined(separator: ", ")
        throw PostgresSyncError.baselineDisagrees(baseline: baseline, evidence: evidence, matches: matches)
    }
}

/// The content hash (`ReleaseContent`) of the master tables a web database's schema holds, for a
/// `--baseline` to be weighed against the versions the folder signed: the rows read from the
/// server, cast to the release's column types, into an in-memory SQLite database and hashed there
/// as a phone hashes its install. The columns are those of the release's tables that the
/// server's tables have, in the release's order: a table of an older client schema hashes as that
/// version's.
enum MasterTablesContent {
    /// Rows read from the server and written to SQLite at a time.
    static let batchRows = 10_000

    /// The hash, or nil when the schema holds none of the master tables.
    static func hash(schema: String, like tables: [ClientTable], _ server: ServerSession) async throws -> String? {
        let memory = try DatabaseQueue(configuration: SQLiteDefences.configuration())
        var found = false
        for table in tables {
            let present = try await columns(of: table, schema: schema, server)
            guard !present.isEmpty else { continue }
            found = true
            let names = present.map(\.name)
            let key = table.key.filter(names.contains)
            // Columns without a type: SQLite keeps each value as the server gave it.
            try await memory.write { db in
                try db.execute(sql: "CREATE TABLE \(table.name) (\(names.joined(separator: ", "))"
                               + (key.isEmpty ? "" : ", PRIMARY KEY (\(key.joined(separator: ", ")))") + ")")
            }
            let select = "SELECT " + present.map { "\($0.name)::\($0.postgresType)" }.joined(separator: ", ") + " FROM \(schema).\(table.name)"
            var batch: [[DatabaseValue]] = []
            let insert = "INSERT INTO \(table.name) VALUES (" + Array(repeating: "?", count: present.count).joined(separator: ", ") + ")"
            let flush = { @Sendable (rows: [[DatabaseValue]]) async throws in
                try await memory.write { db in
                    let statement = try db.cachedStatement(sql: insert)
                    for row in rows { try statement.execute(arguments: StatementArguments(row)) }
                }
            }
            try await server.each("weighing --baseline against the master tables of schema \(schema)", select) { row in
                batch.append(try zip(row, present).map { cell, column in try value(cell, column) })
                if batch.count == batchRows {
                    try await flush(batch)
                    batch.removeAll(keepingCapacity: true)
                }
            }
            try await flush(batch)
        }
        guard found else { return nil }
        return try await memory.read { try ReleaseContentHash.compute($0, columnsFrom: "main") }
    }

    /// The release table's columns that the server's table has, in the release's order.
    private static func columns(of table: ClientTable, schema: String, _ server: ServerSession) async throws -> [ClientTable.Column] {
        var binds = PostgresBindings()
        binds.append("\(schema).\(table.name)")
        let rows = try await server.rows("reading the master tables of schema \(schema)", PostgresQuery(unsafeSQL: """
            SELECT attname::text FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped
            """, binds: binds))
        let names = Set(try rows.map { try $0.decode(String.self) })
        return table.columns.filter { names.contains($0.name) }
    }

    private static func value(_ cell: PostgresCell, _ column: ClientTable.Column) throws -> DatabaseValue {
        switch column.postgresType {
        case "bigint": return try cell.decode(Int64?.self).databaseValue
        case "double precision": return try cell.decode(Double?.self).databaseValue
        default: return try cell.decode(String?.self).databaseValue
        }
    }
}
