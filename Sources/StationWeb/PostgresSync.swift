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
    /// now; matched ignoring case and underscores (`updated_at` finds `updatedAt`).
    public var updatedColumn = "updated_at"
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
    /// Told each step; the crash tests' seam.
    public var onStep: @Sendable (PostgresSyncStep) throws -> Void = { _ in }

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
        StationSupport.Progress.phase("reading the release")
        let state = try await ReleaseState.read(schema: schema, server)
        try onStep(.stateRead)
        let release = try await reader.newest(accepted: state?.accepted)
        try refuse(release, against: state)
        if let state, masterOnly { throw PostgresSyncError.notAFirstRun(option: "--master-only", version: state.version) }
        if let state, baseline != nil { throw PostgresSyncError.notAFirstRun(option: "--baseline", version: state.version) }
        if let baseline, baseline > release.version { throw PostgresSyncError.baselineAfterRelease(baseline: baseline, release: release.version) }
        try onStep(.verified)
        var report = PostgresSyncReport(database: address.description, schema: schema, from: state?.version ?? 0, to: release.version,
                                        committed: false, upToDate: state?.version == release.version, tables: [:], splits: [], usersAffected: 0)
        if report.upToDate { return report }

        let cache = ClientDatabaseCache(folder: scratchFolder)
        // The kept database of the server's version, copied and checked against the server's record of its bytes.
        let keptCopy = (work as NSString).appendingPathComponent("previous-\(state?.version ?? 0).sqlite")
        defer { Self.removeDownload(keptCopy) }
        let kept = state.flatMap { state in
            state.keptSHA256.flatMap { cache.copy(version: state.version, sha256: $0, to: keptCopy) ? keptCopy : nil }
        }
        StationSupport.Progress.phase(kept == nil ? "downloading the client database" : "downloading the delta from \(state?.version ?? 0)")
        let made = try await clientDatabase(of: release, from: state, kept: kept, work: work)
        report.fetched = made.fetched
        defer { Self.removeDownload(made.file) }
        let client = made.connection
        defer { try? client.close() }
        var changes = made.changes
        var previous: (path: String?, downloaded: Bool) = (nil, false)
        if case .unknown = changes {
            previous = if let kept, FileManager.default.fileExists(atPath: kept) { (kept, false) } else { try await previousDatabase(of: state, beside: release, work: work) }
            if let path = previous.path {
                try client.inDatabase { try $0.execute(sql: "ATTACH DATABASE ? AS previous", arguments: [path]) }
                changes = .sincePrevious
            }
        }
        defer { if previous.downloaded { previous.path.map(Self.removeDownload) } }
        try onStep(.downloaded)
        let (tables, clientSchema) = try await client.read { db in
            (try ClientTable.names.map { try ClientTable.read($0, db) }, try Int.fetchOne(db, sql: "SELECT version FROM client_schema"))
        }
        // The server's version of an older client schema lacks the columns the new one added: every row is compared then.
        if clientSchema != state?.clientSchema { changes = .unknown }
        let splitTables = masterOnly ? [] : try await userTables.asyncMap { try await SplitCopy.columns(of: $0, updatedColumn: updatedColumn, server) }

        let found = try await beginLocked(server, expecting: state)
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
        report.tables = try await bring(tables, from: client, server, state: state, clientSchema: clientSchema, changes: changes)
        try await applySplits(masterOnly ? [] : release.splits(after: state?.version ?? baseline ?? 0), to: splitTables, server, into: &report)
        if let operatorSQL { try await server.script("running the operator's SQL (--then)", operatorSQL) }
        try onStep(.operatorSQLRun)

        try await ReleaseState(version: release.version, sequence: release.accepting.sequence, publishedAt: release.accepting.publishedAt,
                               dataset: release.accepting.dataset, databaseSHA256: release.database.sha256,
                               manifestSHA256: release.manifestSHA256, clientSchema: clientSchema, keptSHA256: made.sha256).write(schema: schema, server)
        try onStep(.stateWritten)
        if dryRun {
            try await server.run("rolling the dry run back", "ROLLBACK")
            return report
        }
        StationSupport.Progress.phase("committing")
        try await server.run("committing", "COMMIT")
        report.committed = true
        cache.keep(made.file, version: release.version)
        try onStep(.committed)
        return report
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

    /// The transaction begun under the sync's advisory lock: two syncs never interleave, the
    /// second waits, then finds the first's state and stops.
    private func beginLocked(_ server: ServerSession, expecting state: ReleaseState?) async throws -> ReleaseState? {
        try await server.run("starting the transaction", "BEGIN ISOLATION LEVEL READ COMMITTED")
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
        for (done, split) in splits.enumerated() {
            StationSupport.Progress.phase("copying split \(split.old) → \(split.new) in the user tables", total: splits.count)
            StationSupport.Progress.update(done)
            var copied: [String: Int] = [:]
            for table in splitTables { copied[table.table.table] = try await table.copy(split, server) }
            report.splits.append(PostgresSyncReport.AppliedSplit(version: split.version, old: split.old, new: split.new, copied: copied))
        }
        report.usersAffected = try await SplitCopy.usersAffected(server)
        try onStep(.splitsApplied)
    }

    /// An older release than the database's, another dataset's, or the same version with other
    /// content: refused before anything is written.
    private func refuse(_ release: VerifiedRelease, against state: ReleaseState?) throws {
        guard let state else { return }
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

    private static func removeDownload(_ file: String) {
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
