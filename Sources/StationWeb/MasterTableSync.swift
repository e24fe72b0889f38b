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
    func prepare(_ server: ServerSession, clientSchema: Int?, recordedClientSchema: Int?) async throws {
        var binds = PostgresBindings()
        binds.append(schema)
        binds.append(table.name)
        let rows = try await server.rows("reading \(qualified)'s columns", PostgresQuery(unsafeSQL: """
            SELECT column_name::text, data_type::text FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2
            """, binds: binds))
        guard !rows.isEmpty else {
            try await server.run("creating \(qualified)", table.createStatement(schema: schema))
            return
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
    }

    /// Copies the release's rows in and merges them; returns what changed.
    func bring(from client: DatabaseQueue, _ server: ServerSession) async throws -> PostgresSyncReport.TableCounts {
        try await server.run("staging \(table.name)", "CREATE TEMP TABLE \(incoming) (LIKE \(qualified)) ON COMMIT DROP")
        let columns = table.columns.map(\.name)
        try await server.copy("copying \(table.name) in", into: incoming, columns: columns) { writer in
            var after: [DatabaseValue]?
            repeat {
                let batch = try await client.read { [after] db in try table.batch(after: after, db) }
                if batch.rows > 0 { try await writer.write(batch.text) }
                after = batch.last
            } while after != nil
        }
        var counts = PostgresSyncReport.TableCounts()
        let key = table.key.joined(separator: ", ")
        let values = table.columns.filter { !table.key.contains($0.name) }.map(\.name)
        if values.isEmpty {
            let inserted = try await server.rows("merging \(table.name)", """
                WITH changed AS (INSERT INTO \(qualified) (\(table.columnList)) SELECT \(table.columnList) FROM \(incoming)
                                 ON CONFLICT (\(key)) DO NOTHING RETURNING 1)
                SELECT count(*) FROM changed
                """)
            counts.inserted = try inserted[0].decode(Int.self)
            let removed = try await server.rows("removing \(table.name) the release no longer has", """
                WITH gone AS (DELETE FROM \(qualified) m WHERE NOT EXISTS (
                    SELECT 1 FROM \(incoming) i WHERE \(table.key.map { "i.\($0) = m.\($0)" }.joined(separator: " AND "))) RETURNING 1)
                SELECT count(*) FROM gone
                """)
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
}
