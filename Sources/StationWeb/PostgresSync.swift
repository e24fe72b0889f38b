import Foundation
import GRDB
import NIOCore
import PostgresNIO
import StationClientCore
import StationManifest
import StationSQLite
import StationSupport

/// Brings the web service's PostgreSQL database to the newest release of a folder, as a phone
/// updates (DOMAIN.md, "The web service"): the manifest verified by the same checks
/// (`ReleaseReader`), the client database's size and SHA-256 checked, then in one transaction
/// under an advisory lock: the master tables brought to the release (changed and new rows, by
/// `COPY` into a temporary table and one statement a table; closed rows stay), each split since
/// the database's version copied for every user in the user tables, the operator's SQL, and the
/// release recorded (`<schema>.release_state`). Killed at any point, the database is at the old
/// release or the new. Running it again changes nothing.
///
///     var sync = PostgresSync(reader: reader, address: try PostgresAddress("postgres://web@db/app"), scratchFolder: "/var/tmp/sync")
///     sync.userTables = [UserTable(table: "completions", userColumn: "user_id")]
///     let report = try await sync.run()
public struct PostgresSync: Sendable {
    /// Where the release folder is and which keys it must be signed by.
    public var reader: ReleaseReader
    /// The web service's database.
    public var address: PostgresAddress
    /// Where the master tables live, created on the first run.
    public var schema = "station"
    /// The tables of users' records that splits copy within.
    public var userTables: [UserTable] = [.completions]
    /// Run after the splits, in the same transaction; `pg_temp.station_split_users (table_name,
    /// user_id)` lists the users whose records a split copied.
    public var operatorSQL: String?
    /// The user tables' column of the time a record last changed, which a split's copy sets to
    /// the copy's time; matched ignoring case and underscores (`updated_at` finds `updatedAt`).
    public var updatedColumn = "updated_at"
    /// The user tables' column of the time a record was made, which a copy (a new record) sets to
    /// the copy's time too; matched as `updatedColumn` is.
    public var createdColumn = "created_at"
    /// Seconds any lock the sync takes may be waited for (the sync's own advisory lock, a user
    /// table's row an app's transaction holds), after which the run ends with nothing written.
    public var lockTimeout = 60
    /// Told when the sync's transaction has waited `LockWatch.quietSeconds` for a lock, and each
    /// time whoever holds it changes: the command prints it on stderr.
    public var onWaiting: @Sendable (PostgresLockWait) -> Void = { _ in }
    /// A first run that brings the master tables and the release state alone, copying no split:
    /// for a web database whose user tables do not exist yet (one with a foreign key into the
    /// master's stations can be made only after).
    public var masterOnly = false
    /// A first run onto a web database whose master data is already at this version (kept by
    /// another tool): only the splits after it are copied, as Flyway's baseline.
    public var baseline: Int?
    /// Everything in the transaction, then rolled back: the report says what a run would do.
    public var dryRun = false
    /// Where the client database is downloaded; after a commit, the version's client database is
    /// kept there for the next run to compare with (`ClientDatabaseCache`).
    public var scratchFolder: String
    /// Told each step; the crash tests' seam, not the API's.
    package var onStep: @Sendable (PostgresSyncStep) throws -> Void = { _ in }

    /// A sync of `address` to the newest release `reader` verifies, with the defaults above.
    public init(reader: ReleaseReader, address: PostgresAddress, scratchFolder: String) {
        self.reader = reader
        self.address = address
        self.scratchFolder = scratchFolder
    }

    /// - Throws: `PostgresSyncError`, or `StationClientError` for a folder that is not trusted;
    ///   nothing is written then.
    public func run() async throws -> PostgresSyncReport {
        try PlainName.check(schema, role: "schema")
        try PrivateFolder.prepare(scratchFolder)
        let work = try PrivateFolder.run(in: scratchFolder)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let server = try await ServerSession.connect(address)
        do {
            let report = try await sync(server, work: work)
            await server.close()
            return report
        } catch {
            // Closed without a COMMIT: the server rolls the transaction back, as after a kill.
            await server.close()
            throw error
        }
    }

    /// `work`: this run's own folder inside the scratch folder, for what it downloads and builds.
    private func sync(_ server: ServerSession, work: String) async throws -> PostgresSyncReport {
        try onStep(.connected)
        // A standby is named before anything is downloaded, up to date or not.
        try await server.refuseReadOnly()
        StationSupport.Progress.phase("reading the release")
        var state = try await ReleaseState.read(schema: schema, server)
        try onStep(.stateRead)
        let release = try await reader.newest(accepted: state?.accepted)
        try refuse(release, against: state)
        if let recorded = state, !dryRun {
            state = try await recorded.accepting(release.accepting, schema: schema, lockTimeoutMilliseconds: lockTimeout * 1000, server)
        }
        try onStep(.verified)
        var report = PostgresSyncReport(database: address.description, schema: schema, from: state?.version ?? 0, to: release.version,
                                        committed: false, upToDate: state?.version == release.version, tables: [:], splits: [], usersAffected: 0)
        if report.upToDate { return report }
        let cache = ClientDatabaseCache(folder: scratchFolder)
        let client = try await download(release, from: state, cache: cache, work: work)
        defer { client.cleanUp() }
        report.fetched = client.fetched
        try onStep(.downloaded)
        let contents = try await contents(of: client, state: state, server)
        let backend = try await begin(server)
        let watch = LockWatch(address: address, backend: backend, limit: lockTimeout, onWaiting: onWaiting)
        do {
            return try await watch.during {
                try await inTransaction(server, watch, release: release, state: state, client: client, contents: contents, report: report, cache: cache)
            }
        } catch let PostgresSyncError.server(address, step, message) where message.hasSuffix("[SQLSTATE 55P03]") {
            throw PostgresSyncError.lockTimeout(address: address, step: step, seconds: lockTimeout, holders: watch.holders)
        }
    }

    /// The release's client database made in the scratch folder, with what it takes to read only
    /// what changed, and the files to remove after.
    private struct Download {
        var file: String
        var connection: DatabaseQueue
        var fetched: PostgresSyncReport.Fetched
        var changes: ClientChanges
        var sha256: String
        var removeAfter: [String]

        func cleanUp() {
            try? connection.close()
            removeAfter.forEach(PostgresSync.removeDownload)
        }
    }

    /// The kept database of the server's version (checked against the server's record of its
    /// bytes) with the delta run on it, else the whole database; the previous version's attached
    /// where only the whole one could be had.
    private func download(_ release: VerifiedRelease, from state: ReleaseState?, cache: ClientDatabaseCache, work: String) async throws -> Download {
        let keptCopy = (work as NSString).appendingPathComponent("previous-\(state?.version ?? 0).sqlite")
        let kept = state.flatMap { state in
            state.keptSHA256.flatMap { cache.copy(version: state.version, sha256: $0, to: keptCopy) ? keptCopy : nil }
        }
        StationSupport.Progress.phase(kept == nil ? "downloading the client database" : "downloading the delta from \(state?.version ?? 0)")
        let made: (file: String, connection: DatabaseQueue, fetched: PostgresSyncReport.Fetched, changes: ClientChanges, sha256: String)
        do { made = try await clientDatabase(of: release, from: state, kept: kept, work: work) } catch {
            Self.removeDownload(keptCopy)
            throw error
        }
        var download = Download(file: made.file, connection: made.connection, fetched: made.fetched, changes: made.changes, sha256: made.sha256,
                                removeAfter: [made.file, keptCopy])
        guard case .unknown = made.changes else { return download }
        do {
            let previous = if let kept, FileManager.default.fileExists(atPath: kept) { (kept, false) } else { try await previousDatabase(of: state, beside: release, work: work) }
            if previous.downloaded, let path = previous.path { download.removeAfter.insert(path, at: 0) }
            if let path = previous.path {
                try made.connection.inDatabase { try $0.execute(sql: "ATTACH DATABASE ? AS previous", arguments: [path]) }
                download.changes = .sincePrevious
            }
        } catch {
            download.cleanUp()
            throw error
        }
        return download
    }

    /// What the client database holds, read before the transaction: its tables, its client
    /// schema, which rows to compare, and the user tables the splits are copied in.
    private struct Contents {
        var tables: [ClientTable]
        var clientSchema: Int?
        var changes: ClientChanges
        var splitTables: [SplitCopy]
    }

    private func contents(of client: Download, state: ReleaseState?, _ server: ServerSession) async throws -> Contents {
        let (tables, clientSchema) = try await client.connection.read { db in
            (try ClientTable.names.map { try ClientTable.read($0, db) }, try Int.fetchOne(db, sql: "SELECT version FROM client_schema"))
        }
        // The server's version of an older client schema lacks the columns the new one added: every row is compared then.
        let changes = clientSchema != state?.clientSchema ? .unknown : client.changes
        let splitTables = masterOnly ? [] : try await userTables.asyncMap {
            try await SplitCopy.columns(of: $0, updatedColumn: updatedColumn, createdColumn: createdColumn, server)
        }
        return Contents(tables: tables, clientSchema: clientSchema, changes: changes, splitTables: splitTables)
    }

    /// Everything the sync writes, in its transaction under its advisory lock: two syncs never
    /// interleave, the second waits, then finds the first's state and stops.
    private func inTransaction(_ server: ServerSession, _ watch: LockWatch, release: VerifiedRelease, state: ReleaseState?, client: Download,
                               contents: Contents, report: PostgresSyncReport, cache: ClientDatabaseCache) async throws -> PostgresSyncReport {
        var report = report
        watch.at("taking the sync's advisory lock")
        let found = try await lock(server)
        if found != state {
            // Another sync committed while this one downloaded: the same release is nothing left to do.
            guard let found, found.version == release.version, found.databaseSHA256 == release.database.sha256 else {
                throw PostgresSyncError.changedMeanwhile
            }
            try await server.run("ending the transaction", "ROLLBACK")
            report.upToDate = true
            report.from = found.version
            return report
        }
        if let baseline, state == nil, !masterOnly {
            watch.at("weighing --baseline \(baseline)")
            let evidence = try await BaselineCheck(baseline: baseline, schema: schema, release: release)
                .check(tables: contents.tables, splitTables: contents.splitTables, server)
            report.baseline = .init(version: baseline, evidence: evidence)
        }
        watch.at("bringing the master tables to the release")
        report.tables = try await bring(contents.tables, from: client.connection, server, state: state, clientSchema: contents.clientSchema,
                                        changes: contents.changes)
        watch.at("copying the splits")
        try await applySplits(masterOnly ? [] : release.splits(after: state?.version ?? baseline ?? 0), to: contents.splitTables, server, into: &report)
        watch.at("running the operator's SQL")
        if let operatorSQL { try await server.script("running the operator's SQL (--then)", operatorSQL) }
        try onStep(.operatorSQLRun)
        watch.at("recording the release")
        try await ReleaseState(version: release.version, sequence: release.accepting.sequence, publishedAt: release.accepting.publishedAt,
                               dataset: release.accepting.dataset, databaseSHA256: release.database.sha256, manifestSHA256: release.manifestSHA256,
                               clientSchema: contents.clientSchema, keptSHA256: client.sha256, baseline: state == nil ? baseline : nil).write(schema: schema, server)
        try onStep(.stateWritten)
        if dryRun {
            try await server.run("rolling the dry run back", "ROLLBACK")
            return report
        }
        StationSupport.Progress.phase("committing")
        watch.at("committing")
        try await commit(server)
        report.committed = true
        cache.keep(client.file, version: release.version)
        try onStep(.committed)
        return report
    }

    /// COMMIT, and where the connection dropped during it, the server asked on a new connection
    /// whether the transaction committed (`CommitOutcome`): a run that committed says so.
    private func commit(_ server: ServerSession) async throws {
        let transaction = try await server.transactionID("committing")
        do {
            try await server.run("committing", "COMMIT")
        } catch let error as PostgresSyncError where error.mayHaveCommitted {
            guard let transaction else { throw error }
            switch await CommitOutcome.ask(address, transaction: transaction) {
            case .committed: return
            case .notCommitted:
                guard case let .server(address, step, message) = error else { throw error }
                throw PostgresSyncError.server(address: address, step: step, message: message + "; asked again, the server says nothing was committed")
            case let .unknown(reason): throw PostgresSyncError.commitUnknown(address: address.description, reason: reason)
            }
        }
    }

    /// The release's client database in the scratch folder, open, with the SHA-256 of its bytes:
    /// the kept database of the server's version (its checked copy, `kept`) with the release's
    /// delta run on it, as a phone updates (the delta's SQL checked against the signed hashes, its
    /// guard refusing a database at another version), the keys it wrote recorded on the
    /// connection (`TouchedKeys`), where the release offers a delta from that version; else the
    /// whole database downloaded and checked against the signed manifest.
    private func clientDatabase(of release: VerifiedRelease, from state: ReleaseState?, kept: String?, work: String) async throws
        -> (file: String, connection: DatabaseQueue, fetched: PostgresSyncReport.Fetched, changes: ClientChanges, sha256: String) {
        guard let state, let kept, let delta = try await reader.downloadDelta(from: state.version, of: release, into: work) else {
            let downloaded = try await reader.downloadDatabase(of: release, into: work)
            let connection = try DatabaseQueue(path: downloaded, configuration: Self.readOnly)
            return (downloaded, connection, .init(kind: .full, from: nil, bytes: release.databaseGzip.bytes), .unknown, release.database.sha256)
        }
        let file = (work as NSString).appendingPathComponent("stations-\(release.version).sqlite")
        Self.removeDownload(file)
        do {
            try FileManager.default.moveItem(atPath: kept, toPath: file)
            let connection = try DatabaseQueue(path: file, configuration: SQLiteDefences.configuration())
            // A copy that a failed delta leaves is removed, never used: no journal, and the file
            // is flushed once, when a committed sync keeps it (`ClientDatabaseCache.keep`).
            try connection.inDatabase { db in
                try db.execute(sql: "PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF")
                try TouchedKeys.record(try ClientTable.names.map { name in (name, try ClientTable.read(name, db).key) }, db)
            }
            try await connection.write { db in
                try db.execute(sql: String(decoding: delta.sql, as: UTF8.self))
                let reached = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                guard reached == release.version else { throw StationClientError.wrongVersionAfterDelta(expected: release.version, actual: reached) }
            }
            // What the next sync checks the kept file against (the connection writes no more to it).
            let sha256 = try ResumableDownload.sha256(ofFile: file)
            return (file, connection, .init(kind: .delta, from: state.version, bytes: delta.gzipBytes), .touchedByDelta, sha256)
        } catch {
            Self.removeDownload(file)
            throw error
        }
    }

    /// The client database of the version the server holds, still in the folder, with the content
    /// the server recorded, when the scratch folder kept none: only what differs from it is sent.
    /// nil where there is none; `downloaded` where it was fetched for this sync (and is removed after).
    private func previousDatabase(of state: ReleaseState?, beside release: VerifiedRelease, work: String) async throws -> (path: String?, downloaded: Bool) {
        guard let state else { return (nil, false) }
        guard release.olderDatabases[state.version]?.database.sha256 == state.databaseSHA256 else { return (nil, false) }
        return (try await reader.downloadDatabase(ofVersion: state.version, listedIn: release, into: work), true)
    }

    /// The transaction begun with the sync's own limits: any lock waited for at most
    /// `lockTimeout`, no statement_timeout of the role's cutting a long copy short, and (from
    /// PostgreSQL 14) a backend whose client is gone ending itself at its next check
    /// (`client_connection_check_interval`) instead of waiting on with the sync's lock. Returns the backend's pid, for `LockWatch`.
    private func begin(_ server: ServerSession) async throws -> Int {
        try await server.run("starting the transaction", "BEGIN ISOLATION LEVEL READ COMMITTED")
        let rows = try await server.rows("setting the sync's time limits", """
            SELECT pg_backend_pid(), set_config('lock_timeout', '\(lockTimeout * 1000)', true), set_config('statement_timeout', '0', true),
                   CASE WHEN current_setting('server_version_num')::int >= 140000
                        THEN set_config('client_connection_check_interval', '2000', true) END
            """)
        return try rows[0].decode((Int, String, String, String?).self).0
    }

    /// The sync's advisory lock taken, then the state read again under it.
    private func lock(_ server: ServerSession) async throws -> ReleaseState? {
        var lockKey = PostgresBindings()
        lockKey.append("station-admin sync-postgres \(schema)")
        try await server.run("taking the sync's advisory lock", PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(hashtext($1))", binds: lockKey))
        try onStep(.locked)
        return try await ReleaseState.read(schema: schema, server)
    }

    /// The schema and the master tables made where missing, then each table brought to the release.
    private func bring(_ tables: [ClientTable], from client: DatabaseQueue, _ server: ServerSession, state: ReleaseState?, clientSchema: Int?,
                       changes: ClientChanges) async throws -> [String: PostgresSyncReport.TableCounts] {
        // Made only where missing: a role that has its tables but may not create a schema syncs too.
        if try await server.rows("reading schema \(schema)", "SELECT to_regnamespace('\(schema)') IS NULL")[0].decode(Bool.self) {
            try await server.run("creating schema \(schema)", "CREATE SCHEMA \(schema)")
        }
        var created: Set<String> = []
        for table in tables where try await MasterTableSync(table: table, schema: schema)
            .prepare(server, clientSchema: clientSchema, recordedClientSchema: state?.clientSchema) {
            created.insert(table.name)
        }
        try onStep(.tablesReady)
        var counts: [String: PostgresSyncReport.TableCounts] = [:]
        for (done, table) in tables.enumerated() {
            StationSupport.Progress.phase("bringing \(schema).\(table.name) to the release", total: tables.count)
            StationSupport.Progress.update(done)
            counts[table.name] = try await MasterTableSync(table: table, schema: schema)
                .bring(from: client, server, created: created.contains(table.name), changes: changes)
        }
        try onStep(.tablesCopied)
        return counts
    }

    /// Each split after the server's version, in order, copied in every user table; the users it
    /// copied for, counted.
    private func applySplits(_ splits: [ReleaseSplit], to splitTables: [SplitCopy], _ server: ServerSession,
                             into report: inout PostgresSyncReport) async throws {
        try await SplitCopy.createUsersTable(server)
        for table in splitTables { try await table.probe(server) }
        let time = try await SplitCopy.copyTime(server)
        for (done, split) in splits.enumerated() {
            StationSupport.Progress.phase("copying split \(split.old) → \(split.new) in the user tables", total: splits.count)
            StationSupport.Progress.update(done)
            var copied: [String: Int] = [:], skipped: [String: Int] = [:]
            for table in splitTables {
                let outcome = try await table.copy(split, at: time, server)
                (copied[table.table.table], skipped[table.table.table]) = (outcome.copied, outcome.skipped)
            }
            report.splits.append(PostgresSyncReport.AppliedSplit(version: split.version, old: split.old, new: split.new, copied: copied, skipped: skipped))
        }
        report.usersAffected = try await SplitCopy.usersAffected(server)
        try onStep(.splitsApplied)
    }

    /// An older release than the database's, another dataset's, or the same version with other
    /// content, and a first run's option on a database a sync wrote: refused before anything is written.
    private func refuse(_ release: VerifiedRelease, against state: ReleaseState?) throws {
        if let baseline, baseline > release.version { throw PostgresSyncError.baselineAfterRelease(baseline: baseline, release: release.version) }
        guard let state else { return }
        if masterOnly { throw PostgresSyncError.notAFirstRun(option: "--master-only", version: state.version) }
        if baseline != nil { throw PostgresSyncError.notAFirstRun(option: "--baseline", version: state.version) }
        if let recorded = state.dataset, let offered = release.accepting.dataset, recorded != offered {
            throw PostgresSyncError.otherDataset(database: recorded, release: offered)
        }
        if release.version < state.version { throw PostgresSyncError.rollback(database: state.version, release: release.version) }
        if release.version == state.version && release.database.sha256 != state.databaseSHA256 {
            throw PostgresSyncError.sameVersionOtherContent(version: state.version, database: state.databaseSHA256, release: release.database.sha256)
        }
    }

    private static var readOnly: Configuration {
        var configuration = SQLiteDefences.configuration()
        configuration.readonly = true
        return configuration
    }

    fileprivate static func removeDownload(_ file: String) {
        try? FileManager.default.removeItem(atPath: file)
        try? FileManager.default.removeItem(atPath: file + ".gz")
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async throws -> [T] {
        var result: [T] = []
        result.reserveCapacity(count)
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
