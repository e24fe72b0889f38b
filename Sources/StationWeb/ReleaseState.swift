import Logging
import PostgresNIO
import StationClientCore

/// Which release the server database holds, in a table of its own (`<schema>.release_state`, one
/// row), written in the sync's transaction: read first by the next sync, so that a rollback, a
/// folder of another dataset, or a published version that changed is refused.
struct ReleaseState: Sendable, Equatable {
    var version: Int
    var sequence: Int
    var publishedAt: String?
    var dataset: String?
    var databaseSHA256: String
    var manifestSHA256: String
    var clientSchema: Int?
    /// SHA-256 of the bytes of the client database the sync kept in its scratch folder: the next
    /// sync builds on that file only when its bytes still hash to this (recorded in the server's
    /// transaction, out of reach of whoever can write the folder).
    var keptSHA256: String?
    /// The `--baseline` the first run was given (checked against the data, `BaselineCheck`), kept
    /// on every later write: how the database's history began.
    var baseline: Int? = nil

    var accepted: AcceptedRelease { AcceptedRelease(sequence: sequence, publishedAt: publishedAt, dataset: dataset) }

    static func table(_ schema: String) -> String { "\(schema).release_state" }

    static func createStatement(_ schema: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(table(schema)) (
            id integer PRIMARY KEY CHECK (id = 1),
            version integer NOT NULL CHECK (version > 0),
            sequence bigint NOT NULL CHECK (sequence >= 0),
            published_at text,
            dataset text,
            database_sha256 text NOT NULL,
            manifest_sha256 text NOT NULL,
            client_schema integer,
            synced_at timestamptz NOT NULL DEFAULT now(),
            kept_sha256 text,
            baseline integer)
        """
    }

    /// The state, or nil for a database no sync wrote yet.
    static func read(schema: String, _ server: ServerSession) async throws -> ReleaseState? {
        let exists = try await server.rows("reading \(table(schema))", "SELECT to_regclass('\(table(schema))') IS NOT NULL")
        guard try exists.first?.decode(Bool.self) == true else { return nil }
        let rows = try await server.rows("reading \(table(schema))", """
            SELECT version, sequence, published_at, dataset, database_sha256, manifest_sha256, client_schema,
                   to_jsonb(s) ->> 'kept_sha256', (to_jsonb(s) ->> 'baseline')::integer FROM \(table(schema)) s
            """)
        guard rows.count == 1 else {
            throw PostgresSyncError.damagedState(table: table(schema), reason: "\(rows.count) rows, not 1")
        }
        do {
            let (version, sequence, publishedAt, dataset, database, manifest, clientSchema, kept, baseline) =
                try rows[0].decode((Int, Int, String?, String?, String, String, Int?, String?, Int?).self)
            return ReleaseState(version: version, sequence: sequence, publishedAt: publishedAt, dataset: dataset,
                                databaseSHA256: database, manifestSHA256: manifest, clientSchema: clientSchema, keptSHA256: kept, baseline: baseline)
        } catch {
            throw PostgresSyncError.damagedState(table: table(schema), reason: "\(error)")
        }
    }

    /// This state with `accepted` recorded (the higher sequence, the newer `published_at`), written
    /// at once in a transaction of its own when it changes: a sync whose download is cut after
    /// the manifest verified then still refuses an older manifest next run, as a phone's trust
    /// record does (docs/clients.md, step 3). A first run has no state to keep it in, as a
    /// phone's new install has no file.
    ///
    /// The transaction waits for a lock no longer than the sync's own and commits locally: a
    /// synchronous standby that does not answer must not hold the run here (the record is a
    /// floor, which the sync's commit writes again). A lock held on the state past that (another
    /// run's, an operator's) leaves the record for the commit: the run's own transaction then
    /// waits for the same lock within the same limit and names its holder.
    func accepting(_ accepted: AcceptedRelease, schema: String, lockTimeoutMilliseconds: Int, _ server: ServerSession) async throws -> ReleaseState {
        var next = self
        next.sequence = max(sequence, accepted.sequence)
        if let offered = accepted.publishedAt, publishedAt.map({ $0 < offered }) ?? true { next.publishedAt = offered }
        guard next != self else { return self }
        // Against the row as it is, not as this run read it: another run may have recorded a
        // newer manifest since, and neither field ever goes back.
        let step = "recording the manifest accepted"
        var binds = PostgresBindings()
        binds.append(next.sequence)
        binds.append(next.publishedAt)
        try await server.run(step, "BEGIN")
        do {
            _ = try await server.rows(step, "SELECT set_config('lock_timeout', '\(lockTimeoutMilliseconds)', true), set_config('synchronous_commit', 'local', true)")
            try await server.run(step, PostgresQuery(unsafeSQL: "UPDATE \(Self.table(schema)) SET sequence = greatest(sequence, $1), published_at = greatest(published_at, $2) WHERE id = 1",
                                                     binds: binds))
            try await server.run(step, "COMMIT")
        } catch {
            try? await server.run(step, "ROLLBACK")
            if case PostgresSyncError.server(_, _, let message) = error, message.hasSuffix("[SQLSTATE 55P03]") { return self }
            throw error
        }
        return next
    }

    func write(schema: String, _ server: ServerSession) async throws {
        var binds = PostgresBindings()
        binds.append(version)
        binds.append(sequence)
        binds.append(publishedAt)
        binds.append(dataset)
        binds.append(databaseSHA256)
        binds.append(manifestSHA256)
        binds.append(clientSchema)
        binds.append(keptSHA256)
        binds.append(baseline)
        // Made, or given the columns an earlier StationAdmin's lacks, only where missing: a role
        // that may not create in the schema syncs onto a table that is there.
        let found = try await server.rows("recording the release", """
            SELECT to_regclass('\(Self.table(schema))') IS NOT NULL,
                   array(SELECT attname::text FROM pg_attribute WHERE attrelid = to_regclass('\(Self.table(schema))') AND NOT attisdropped)
            """)[0].decode((Bool, [String]).self)
        if !found.0 {
            try await server.run("recording the release", Self.createStatement(schema))
        } else {
            for (column, type) in [("kept_sha256", "text"), ("baseline", "integer")] where !found.1.contains(column) {
                try await server.run("recording the release", "ALTER TABLE \(Self.table(schema)) ADD COLUMN \(column) \(type)")
            }
        }
        try await server.run("recording the release", PostgresQuery(unsafeSQL: """
            INSERT INTO \(Self.table(schema)) AS s (id, version, sequence, published_at, dataset, database_sha256, manifest_sha256, client_schema, synced_at, kept_sha256, baseline)
            VALUES (1, $1, $2, $3, $4, $5, $6, $7, now(), $8, $9)
            ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version, sequence = EXCLUDED.sequence, published_at = EXCLUDED.published_at,
                dataset = EXCLUDED.dataset, database_sha256 = EXCLUDED.database_sha256, manifest_sha256 = EXCLUDED.manifest_sha256,
                client_schema = EXCLUDED.client_schema, synced_at = now(), kept_sha256 = EXCLUDED.kept_sha256,
                baseline = coalesce(EXCLUDED.baseline, s.baseline)
            """, binds: binds))
    }
}
