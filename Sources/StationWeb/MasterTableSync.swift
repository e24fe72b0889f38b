import GRDB
import NIOCore
import PostgresNIO

/// One master table brought to the release: created on the first run, checked against the client
/// schema on every run, then the release's rows copied into a temporary table and merged in one
/// statement (new rows inserted, changed ones updated, none deleted but the connections the
/// release no longer has: a connection is its key, and no record points at it).
struct MasterTableSync {
    let table: ClientTable
    let schema: String

    var qualified: String { "\(schema).\(table.name)" }
    var incoming: String { "station_incoming_\(table.name)" }

    /// Creates the table, or checks that it still has the client schema's columns: a column the
    /// release added since the recorded client schema is added; one missing otherwise, or of
    /// another type, was changed by hand and refuses.
    /// - Returns: whether the table was created (empty: the rows are copied straight into it).
    @discardableResult
    func prepare(_ server: ServerSession, clientSchema: Int?, recordedClientSchema: Int?) async throws -> Bool {
        var binds = PostgresBindings()
        binds.append(schema)
        binds.append(table.name)
        let rows = try await server.rows("reading \(qualified)'s columns", PostgresQuery(unsafeSQL: """
            SELECT a.attname::text, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
            JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped
            """, binds: binds))
        guard !rows.isEmpty else {
            try await server.run("creating \(qualified)", table.createStatement(schema: schema))
            return true
        }
        var found: [String: String] = [:]
        for row in rows {
            let (name, type) = try row.decode((String, String).self)
            found[name] = type
        }
        for column in table.columns {
            switch found[column.name] {
            case column.postgresType?: continue
            case nil where (recordedClientSchema ?? 0) < (clientSchema ?? 0):
                try await server.run("adding \(qualified).\(column.name)", "ALTER TABLE \(qualified) ADD COLUMN \(column.name) \(column.postgresType)")
            case let other:
                throw PostgresSyncError.changedByHand(table: qualified, column: column.name, expected: column.postgresType, found: other)
            }
        }
        return false
    }

    /// Copies the release's rows in and merges them; returns what changed. Into a table this
    /// sync created, the rows go straight in: there is nothing to merge with.
    ///
    /// With `changes` other than `.unknown`, only the rows that differ from the version the
    /// server holds are sent, and the connections that version alone has are removed.
    func bring(from client: DatabaseQueue, _ server: ServerSession, created: Bool, changes: ClientChanges) async throws -> PostgresSyncReport.TableCounts {
        var counts = PostgresSyncReport.TableCounts()
        if created {
            // postgres-nio's COPY quotes the table's name whole: the schema comes from the search path.
            try await server.run("copying \(table.name) in", "SET LOCAL search_path TO \(schema)")
            counts.inserted = try await copy(from: client, into: table.name, server)
            try await server.run("copying \(table.name) in", "RESET search_path")
            return counts
        }
        try await server.run("staging \(table.name)", "CREATE TEMP TABLE \(incoming) (LIKE \(qualified)) ON COMMIT DROP")
        _ = try await copy(from: client, into: incoming, rows: changes.changedRows, server)
        let key = table.key.joined(separator: ", ")
        let values = table.columns.filter { !table.key.contains($0.name) }.map(\.name)
        if values.isEmpty {
            let inserted = try await server.rows("merging \(table.name)", """
                WITH changed AS (INSERT INTO \(qualified) (\(table.columnList)) SELECT \(table.columnList) FROM \(incoming)
                                 ON CONFLICT (\(key)) DO NOTHING RETURNING 1)
                SELECT count(*) FROM changed
                """)
            counts.inserted = try inserted[0].decode(Int.self)
            let removed: [PostgresRow]
            if let removedRows = changes.removedRows {
                let gone = "station_removed_\(table.name)"
                try await server.run("staging \(table.name) removed", "CREATE TEMP TABLE \(gone) (LIKE \(qualified)) ON COMMIT DROP")
                _ = try await copy(from: client, into: gone, rows: removedRows, server)
                removed = try await server.rows("removing \(table.name) the release no longer has", """
                    WITH gone AS (DELETE FROM \(qualified) m USING \(gone) g WHERE \(table.key.map { "g.\($0) = m.\($0)" }.joined(separator: " AND ")) RETURNING 1)
                    SELECT count(*) FROM gone
                    """)
            } else {
                removed = try await server.rows("removing \(table.name) the release no longer has", """
                    WITH gone AS (DELETE FROM \(qualified) m WHERE NOT EXISTS (
                        SELECT 1 FROM \(incoming) i WHERE \(table.key.map { "i.\($0) = m.\($0)" }.joined(separator: " AND "))) RETURNING 1)
                    SELECT count(*) FROM gone
                    """)
            }
            counts.removed = try removed[0].decode(Int.self)
            return counts
        }
        let merged = try await server.rows("merging \(table.name)", """
            WITH changed AS (
                INSERT INTO \(qualified) AS m (\(table.columnList)) SELECT \(table.columnList) FROM \(incoming)
                ON CONFLICT (\(key)) DO UPDATE SET \(values.map { "\($0) = EXCLUDED.\($0)" }.joined(separator: ", "))
                WHERE (\(values.map { "m.\($0)" }.joined(separator: ", "))) IS DISTINCT FROM (\(values.map { "EXCLUDED.\($0)" }.joined(separator: ", ")))
                RETURNING (xmax = 0) AS inserted)
            SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM changed
            """)
        (counts.inserted, counts.updated) = try merged[0].decode((Int, Int).self)
        return counts
    }

    /// Streams the client table into `target` by `COPY`, a batch read while the server takes the
    /// one before; returns the rows sent.
    private func copy(from client: DatabaseQueue, into target: String, rows: ClientTable.Selection = .all, _ server: ServerSession) async throws -> Int {
        var sent = 0
        let columns = rows == .removedSincePrevious || rows == .removedByDelta ? table.key : table.columns.map(\.name)
        try await server.copy("copying \(table.name) in", into: target, columns: columns) { writer in
            var after: [Int64]?
            repeat {
                // Outside a transaction: the files never change, and `previous` and the touched keys are the connection's.
                let batch = try client.inDatabase { [after] db in try table.batch(after: after, rows: rows, db) }
                if batch.rows > 0 { try await writer.write(batch.text) }
                sent += batch.rows
                after = batch.last
            } while after != nil
        }
        return sent
    }
}

/// What the client connection knows of how the release differs from the version the server holds.
enum ClientChanges {
    /// Nothing: every row is sent and compared on the server.
    case unknown
    /// The client database of the server's version is attached as `previous` (its signed hash the
    /// one `release_state` records): the rows that differ from it are sent.
    case sincePrevious
    /// The release's database is that version's with the release's delta run on it by this
    /// connection, which recorded the keys it wrote (`TouchedKeys`): those keys' rows are sent.
    case touchedByDelta

    var changedRows: ClientTable.Selection {
        switch self {
        case .unknown: .all
        case .sincePrevious: .changedSincePrevious
        case .touchedByDelta: .touchedByDelta
        }
    }

    /// The keys gone since the server's version, where they can be told from the client connection.
    var removedRows: ClientTable.Selection? {
        switch self {
        case .unknown: nil
        case .sincePrevious: .removedSincePrevious
        case .touchedByDelta: .removedByDelta
        }
    }
}
