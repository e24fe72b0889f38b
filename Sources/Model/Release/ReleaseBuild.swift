import Foundation
import GRDB
import StationCheck
import StationDelta
import StationManifest
import StationSchema
import StationSupport

/// Builds a version into `building/N/`, in named steps: read one state of the master (the client
/// tables, the checks, the carry-over script, the deltas on a twin connection), complete the
/// client database file (indexes, its SHA-256 and gzip), take the deltas and join those through
/// older releases, and hash the content. With `checks`, refuses a version that has error-level
/// findings no waiver accepts.
///
/// Two connections read the state: the main one fills the client tables and ends its read, so
/// that the file's indexes and gzip begin, while a twin renders the deltas (and hashes the
/// newest version's content): the two halves overlap instead of running one after the other.
struct ReleaseBuild {
    let master: MasterDatabase
    let requested: Int?
    let building: ReleaseFolder
    let published: PublishedReleases
    let spacing: Int
    let checks: CheckLimits?
    let step: (ReleaseStep) throws -> Void

    /// What the read of one state leaves for the steps after it.
    private struct StateRead {
        var version: Int
        var rows: [String: Int]
        var clientSchema: Int
        var carryOver: ReleasedFile
        var splits: [StationSplit]
        var checkTally: CheckTally?
        /// The deltas this connection rendered, where no twin could start.
        var ownDeltas: RenderedDeltas?
        var twin: BackgroundTask<TwinBuild>?
        /// Whether the twin hashes the content (the master holds the file's values).
        var twinHashes: Bool
    }

    /// The client database file once complete: its gzip's outcome and the content hash under way.
    private struct DatabaseFile {
        var path: String
        var compressed: Result<(sourceSha256: String, bytes: Int, sha256: String, blocksTakenAhead: Int), Error>
        var hashing: BackgroundTask<String>?
    }

    private var scratchDatabase: String { building.filePath("stations.sqlite") }

    func run() throws -> (ReleasedVersion, CheckTally?) {
        var phases = PhaseLog()
        try FileManager.default.createDirectory(atPath: building.path, withIntermediateDirectories: true)
        let abandoned = BuildAbandonment(), handOff = DeltaHandOff()
        let rendering = DeltaRendering(published: published, building: building, spacing: spacing, abandoned: abandoned,
                                       declared: master.declared)
        let state = try readOneState(rendering: rendering, handOff: handOff, abandoned: abandoned)
        // Nothing of this build outlives it, whatever fails from here.
        defer { _ = try? state.twin?.wait() }
        // A folder that cannot take this release is refused before the indexes and the gzip.
        let existing = try published.manifest.wait()?.manifest
        try published.folder.requireOwnership(of: state.version, manifest: existing)
        // A twin that ended without handing deltas over (it could not begin) has its own error to tell.
        state.twin?.whenDone { handOff.deliver(.failure(CancellationError())) }
        phases.done("client tables")
        let file = try completeDatabaseFile(state)
        defer { _ = try? file.hashing?.wait() }
        phases.done("indexes, database sha256 and gzip (\((try? file.compressed.get())?.blocksTakenAhead ?? 0) blocks deflated ahead)")
        let rendered = try takeDeltas(state, handOff: handOff)
        phases.done("deltas, after the gzip")
        try step(.deltasWritten)
        let gzipped = try file.compressed.get()
        let database = ReleasedFile(path: file.path, bytes: try Self.size(of: building.filePath(file.path)), sha256: gzipped.sourceSha256)
        let databaseGzip = ReleasedFile(path: ReleaseLayout.databaseGzip(state.version), bytes: gzipped.bytes, sha256: gzipped.sha256)
        var (deltas, downloads) = try Self.publishedDeltas(
            rendered, version: state.version, databaseGzip: databaseGzip, carryOver: state.carryOver,
            joiningThrough: (published.folder, existing?.versions ?? []), building: building, phases: &phases)
        let contentHash = try hashContent(state, file)
        phases.done("content hash")
        deltas.sort { $0.from < $1.from }
        downloads.sort { $0.from < $1.from }
        return (ReleasedVersion(
            version: state.version, database: database, databaseGzip: databaseGzip,
            rows: state.rows, contentHash: contentHash, deltas: deltas, carryOver: state.carryOver, downloads: downloads,
            clientSchema: state.clientSchema, splits: state.splits,
            contentColumns: ContentHash.columns(master.declared, clientSchema: state.clientSchema)), state.checkTally)
    }

    // MARK: The steps

    /// Step 1: in one read transaction, the version's checks, its client tables (into the scratch
    /// database attached), carry-over script and splits; the twin renders the deltas meanwhile.
    private func readOneState(rendering: DeltaRendering, handOff: DeltaHandOff, abandoned: BuildAbandonment) throws -> StateRead {
        let requested = requested, building = building, declared = master.declared
        return try master.readingOneState(attaching: scratchDatabase, alongside: { db -> TwinBuild in
            try Self.buildOnTheTwin(db, declared, requested: requested, building: building, rendering: rendering, handOff: handOff)
        }, handing: { db, twin in
            do {
                return try read(db, twin: twin, rendering: rendering)
            } catch {
                // The error is told once the twin has stopped: it renders no more deltas.
                abandoned.abandon()
                throw error
            }
        })
    }

    private func read(_ db: Database, twin: BackgroundTask<TwinBuild>?, rendering: DeltaRendering) throws -> StateRead {
        let newest = try MasterDatabase.dataVersion(db)
        guard newest > 0 else { throw ReleaseError.nothingImported }
        let version = requested ?? newest
        try NoSuchVersion.require(version, newest: newest, lowest: 0)
        var checkTally: CheckTally?
        if let checks, version > 0 {
            Progress.phase("checking version \(version)")
            let outcome = try VersionChecks.releaseChecks(db, master.declared, version: version, newest: newest, limits: checks)
            if !outcome.blocking.isEmpty { throw ReleaseError.checksFailed(version: version, outcome.blocking) }
            checkTally = outcome.tally
        }
        try FileManager.default.createDirectory(atPath: building.filePath("\(version)"), withIntermediateDirectories: true)
        Progress.phase("building the client database of version \(version)")
        let rows = try ReleaseDatabaseBuilder.fill(version: version, newest: newest, master.declared, db)
        let clientSchema = try ClientSchema.version(atData: version, db)
        try step(.clientTablesBuilt)
        // Without a twin (another writer held the master's lock a moment), the deltas are this connection's.
        let ownDeltas = twin == nil ? try rendering.render(db, version: version, newest: newest) : nil
        return StateRead(
            version: version, rows: rows, clientSchema: clientSchema, carryOver: try Self.writeCarryOver(version, into: building, db),
            splits: try UpdateLog.splits(db, after: 0, through: version), checkTally: checkTally, ownDeltas: ownDeltas, twin: twin,
            twinHashes: try twin != nil && Self.masterHoldsTheFilesValues(db, master.declared, version: version, newest: newest))
    }

    /// Step 2: the client database moved into its version folder, indexed, hashed and gzipped on
    /// every core; its content hashed from a copy beside it where the twin does not.
    private func completeDatabaseFile(_ state: StateRead) throws -> DatabaseFile {
        // The twin reports nothing (progress is this task's): its work is named with this one's.
        Progress.phase(state.twin == nil ? "indexing, hashing and compressing" : "indexing and compressing the database, writing deltas beside it")
        let path = ReleaseLayout.database(state.version)
        let file = building.filePath(path)
        try AtomicFile.moveIntoPlace(scratchDatabase, file, replacing: false)
        // Without the twin's, the hash reads a copy of the file's tables beside the indexes and
        // the gzip, which uses every core and hashes the file's bytes in the same read. The copy
        // stays outside the version folder, which is what gets published.
        let hashing = state.twinHashes ? nil : try ReleaseDatabaseBuilder.hashInBackground(file, master.declared, copyingTo: building.filePath("hashed.sqlite"))
        let deflating = DeflatingAhead(file: file, settings: .database)
        let compressed = Result {
            defer { _ = deflating.finish() }
            try ReleaseDatabaseBuilder.complete(file, version: state.version, master.declared, besideOtherWork: true)
            return try ParallelGzip.compress(file: file, to: building.filePath(ReleaseLayout.databaseGzip(state.version)),
                                             deflatedAhead: deflating.finish())
        }
        return DatabaseFile(path: path, compressed: compressed, hashing: hashing)
    }

    /// Step 3: the deltas, this connection's or the twin's as soon as it has written them (the
    /// joins are made while it may still hash).
    private func takeDeltas(_ state: StateRead, handOff: DeltaHandOff) throws -> RenderedDeltas {
        if state.twin != nil { Progress.phase("finishing the deltas") }
        do {
            return try state.ownDeltas ?? handOff.wait()
        } catch {
            _ = try state.twin?.wait()
            throw error
        }
    }

    /// Step 4: the content hash, the background copy's or the twin's; both awaited even when the
    /// indexes, the gzip or a join failed: nothing of this build outlives it.
    private func hashContent(_ state: StateRead, _ file: DatabaseFile) throws -> String {
        let twinBuild = Result { try state.twin?.wait() }
        let backgroundHash = Result { try file.hashing?.wait() }
        guard let contentHash = try backgroundHash.get() ?? twinBuild.get()?.contentHash else {
            preconditionFailure("a twin that began hashes when this connection lets it")
        }
        return contentHash
    }
}

extension ReleaseBuild {
    /// The twin's half of a build: the deltas, handed over as soon as they are written, then the
    /// content hash of the newest version, from the master's tables when they hold the file's values.
    private static func buildOnTheTwin(_ db: Database, _ declared: DeclaredSchema, requested: Int?, building: ReleaseFolder, rendering: DeltaRendering,
                                       handOff: DeltaHandOff) throws -> TwinBuild {
        let newest = try MasterDatabase.dataVersion(db)
        let version = requested ?? newest
        // This connection's errors are the other one's to tell.
        guard newest > 0, (0...newest).contains(version) else { return TwinBuild() }
        do {
            try FileManager.default.createDirectory(atPath: building.filePath("\(version)"), withIntermediateDirectories: true)
            handOff.deliver(.success(try rendering.render(db, version: version, newest: newest)))
        } catch {
            handOff.deliver(.failure(error))
            throw error
        }
        // One core, SQLite rendering every row; the master's values are the file's when the master
        // declares the client's types.
        let hash = try masterHoldsTheFilesValues(db, declared, version: version, newest: newest)
            ? ContentHash.compute(db, declared, clientSchema: ClientSchema.version(atData: version, db)) : nil
        return TwinBuild(contentHash: hash)
    }

    /// The script phones that download the database or update the app run after it: the
    /// visit records of every split up to `version` carried over.
    private static func writeCarryOver(_ version: Int, into building: ReleaseFolder, _ db: Database) throws -> ReleasedFile {
        let script = DigestSink(next: try FileSink(path: building.filePath(ReleaseLayout.carryOver(version))))
        try CarryOverScript.write(to: version, splits: UpdateLog.splits(db, after: 0, through: version), into: script)
        try script.finish()
        return ReleasedFile(path: ReleaseLayout.carryOver(version), bytes: script.byteCount, sha256: script.sha256)
    }

    /// The deltas the manifest lists and what each older version downloads: the rendered deltas
    /// no larger than the database, then those joined through older releases; a version whose
    /// delta would be larger downloads the database.
    private static func publishedDeltas(_ rendered: RenderedDeltas, version: Int, databaseGzip: ReleasedFile, carryOver: ReleasedFile?,
                                        joiningThrough published: (folder: ReleaseFolder, versions: [ReleasedVersion]),
                                        building: ReleaseFolder, phases: inout PhaseLog) throws -> ([ReleasedDelta], [ClientDownload]) {
        let plan = rendered.plan
        let written = rendered.written
        var deltas: [ReleasedDelta] = []
        func fullDownload(_ from: Int) -> ClientDownload {
            ClientDownload(from: from, kind: .full, path: databaseGzip.path, carryOver: carryOver?.path)
        }
        var downloads: [ClientDownload] = []
        for (from, deltaPath, delta) in written {
            // A delta larger than the whole database is of no use to anyone: not published.
            if delta.gzipBytes > databaseGzip.bytes {
                try FileManager.default.removeItem(atPath: building.filePath(deltaPath))
                downloads.append(fullDownload(from))
                continue
            }
            deltas.append(ReleasedDelta(
                from: from, to: version,
                file: ReleasedFile(path: deltaPath, bytes: delta.gzipBytes, sha256: delta.gzipSha256),
                sqlBytes: delta.sqlBytes, sqlSha256: delta.sqlSha256,
                statements: delta.summary.everyStatementCount, duplicates: delta.summary.duplicates, via: nil))
            downloads.append(ClientDownload(from: from, kind: .delta, path: deltaPath))
        }
        if !plan.joinable.isEmpty {
            Progress.phase("joining deltas through older releases", total: plan.joinable.count)
            let joined = try DeltaJoiner(published: published, building: building, version: version, own: deltas)
                .join(plan.joinable, upTo: databaseGzip.bytes)
            phases.done("deltas joined")
            for (from, delta) in joined {
                if let delta {
                    deltas.append(delta)
                    downloads.append(ClientDownload(from: from, kind: .delta, path: delta.file.path))
                } else {
                    downloads.append(fullDownload(from))
                }
            }
        }
        return (deltas, downloads)
    }

    /// The size of a file this release just wrote, by `FileChecks.size`.
    private static func size(of path: String) throws -> Int {
        guard let size = FileChecks.size(path) else { throw FileError(cannot: "read the size of \(path)") }
        return size
    }

    /// Whether the master's tables hold the values of the client file of `version`, so that its
    /// content hash can be read from them: the newest version, with the client's types declared.
    private static func masterHoldsTheFilesValues(_ db: Database, _ declared: DeclaredSchema, version: Int, newest: Int) throws -> Bool {
        try version == newest && ClientSchema.declaresTheMastersTypes(db, declared, clientSchema: ClientSchema.version(atData: version, db))
    }
}
