import Foundation
import GRDB
import StationCheck
import StationDelta
import StationSchema
import StationSupport
import Synchronization

/// How `release` runs.
public struct ReleaseOptions: Sendable {
    /// The release folder (`--out`), created if missing.
    public var outputFolder: String
    /// nil: the newest version.
    public var version: Int?
    /// Verify the release on the real `sqlite3` before publishing it (`--no-verify` turns it off).
    public var verify: Bool
    /// Release even while `check` finds an error that no waiver accepts.
    public var skipChecks = false
    /// The limits the checks run with.
    public var checkLimits = CheckLimits()
    /// Every how many releases a checkpoint falls (`DeltaChainPlan`): tests set it low to reach
    /// several levels with a few versions.
    public var checkpointSpacing = DeltaChainPlan.defaultSpacing
    /// How long to wait while another process writes the same release folder.
    public var lockTimeout: TimeInterval = 600
    /// Told once when the release waits for another process's lock (for a message on stderr).
    public var onWait: (@Sendable (String) -> Void)?
    /// Called after each step: the seam through which tests commit a version in the middle
    /// of a release, or kill the process at a chosen step.
    public var onStep: (@Sendable (ReleaseStep) throws -> Void)?
    /// Signs the manifest (`--sign`); nil: unsigned, refused in a folder already signed.
    public var signing: ManifestSigning?

    /// Options of a default `release`: the newest version, verified, checked.
    public init(outputFolder: String = "release", version: Int? = nil, verify: Bool = true) {
        self.outputFolder = outputFolder
        self.version = version
        self.verify = verify
    }
}

/// What a release published.
public struct ReleaseResult: Sendable {
    /// The version built, as the manifest lists it.
    public var released: ReleasedVersion
    /// The manifest as published.
    public var manifest: Manifest
    /// What `verify` checked; nil when not verified.
    public var verification: VerificationReport?
    /// The checks of the released version, read in the same state as the release; nil with `skipChecks`.
    public var checks: CheckTally?
    /// Set when this release first completed a publish that a killed release left half done.
    public var completedInterruptedVersion: Int?
    /// Build folders and temporary files of dead processes that this release removed.
    public var removedLeftovers: [String]
}

extension MasterDatabase {
    /// Builds the client database of a version and the delta from every older client version
    /// that can use one, verifies them, and adds them to the release folder.
    ///
    /// Clients are versions 1 to V − 1 (version 0 is a new install: it downloads the
    /// database). A delta whose gzip would be larger than the database's gzip is not published;
    /// `ReleasedVersion.downloads` tells each older version which file it gets.
    ///
    /// Safe under concurrency and interruption:
    /// - everything is read from one state of the master (one read transaction), so an
    ///   import committing meanwhile is simply not seen;
    /// - the folder is locked for the whole release (`ReleaseFolderLock`); a second release
    ///   into it waits, and a folder of another master (lineage) is refused;
    /// - the version is built in a build folder and published by a journaled sequence of
    ///   renames, manifest last (`ReleaseFolder.publish`): a release killed at any point leaves
    ///   a folder that the next release completes and cleans.
    ///
    /// - Throws: `ReleaseError` (no such version, a corrupt or foreign folder, a failed
    ///   verification); the folder is unchanged then.
    @discardableResult
    public func release(_ options: ReleaseOptions = ReleaseOptions()) throws -> ReleaseResult {
        defer { Progress.finish() }
        var phases = PhaseLog()
        // A damaged master publishes nothing, and leaves no folder behind.
        try read { try Self.refuseDamage($0, path: path) }
        let folder = try ReleaseFolder.prepare(options.outputFolder)
        try stampIfNeeded()
        guard let lineage = try lineage() else { throw ReleaseError.masterWithoutLineage(path) }
        // Someone else's folder is refused before the lock file is made in it; again below, once
        // locked, for what may have come meanwhile.
        try folder.refuseStrangersInANewFolder()
        let lock = try ReleaseFolderLock.acquire(folder, exclusive: true, timeout: options.lockTimeout, onWait: options.onWait)
        defer { withExtendedLifetime(lock) {} }
        let completed = try folder.completeInterruptedPublish()
        let leftovers = try folder.removeLeftovers()
        // A folder of someone else's is refused before anything is built in it.
        try folder.refuseStrangersInANewFolder()
        if options.signing == nil && folder.isSigned { throw ReleaseError.signingRequired(folder.signaturesPath) }
        // The manifest is read and checked beside the start of the build, which needs it only for
        // the deltas (a long history's manifest is megabytes of JSON listing thousands of files). Sizes only, so that
        // a release does not slow down as the folder grows: an older file is hashed when it is read
        // (a delta this release joins); `verify` reads every file.
        let published = PublishedReleases(folder: folder, manifest: BackgroundTask {
            let existing = try folder.manifestFileIfPresent(depth: { _ in .sizes })
            try folder.requireLineage(lineage, of: existing?.manifest)
            return existing
        })
        defer { _ = try? published.manifest.wait() }
        phases.done("release folder locked")
        let step: (ReleaseStep) throws -> Void = { try options.onStep?($0) }

        let building = "\(ReleaseFolder.buildingPrefix)\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let buildFolder = ReleaseFolder(path: folder.filePath(building))
        var publishDecided = false
        defer { if !publishDecided { try? FileManager.default.removeItem(atPath: buildFolder.path) } }
        let (released, checks) = try ReleaseError.translating(folder.path) {
            try build(version: options.version, into: buildFolder, beside: published,
                      spacing: options.checkpointSpacing, checks: options.skipChecks ? nil : options.checkLimits, step: step)
        }
        let existingFile = try published.manifest.wait()
        let existing = existingFile?.manifest
        try requirePublishedHistory(existing, folder: folder.path, released: released, newest: try dataVersion(), scratch: buildFolder.path)
        var verification: VerificationReport?
        if options.verify {
            let verifier = ReleaseVerifier(folder: buildFolder, master: self, scratch: buildFolder.filePath("verify"))
            verification = try verifier.verify(released, olderDatabases: existing.map { (folder, $0) })
            if !verification!.failures.isEmpty { throw ReleaseError.verificationFailed(verification!.failures) }
        }
        try step(.verified)
        phases = PhaseLog()

        var manifest = existing ?? Manifest(lineage: lineage, newest: released.version, versions: [])
        manifest.lineage = lineage
        // What this release adds is of this code's format (a joined delta's `sql_parts`, say), so
        // the folder says so; `ManifestAudit` refuses a format newer than its code reads.
        manifest.format = Manifest.currentFormat
        manifest.versions.removeAll { $0.version == released.version }
        manifest.versions.append(released)
        manifest.versions.sort { $0.version < $1.version }
        manifest.newest = manifest.versions.last!.version
        if let signing = options.signing { manifest = signing.stamped(manifest, after: existing) }
        try folder.publish(version: released.version, from: building, manifest: manifest, extending: existingFile,
                           signing: options.signing) { done in
            // From the intent on, the build folder is the publish's to finish, not ours to remove.
            if done == .intentWritten { publishDecided = true }
            try step(done)
        }
        // The published folder keeps the manifest's contract. No hash is read again: the new
        // files' were computed from the bytes as they were written. The older versions' files
        // were checked when the manifest was loaded, under the lock this release still holds,
        // and a publish touches only its own version's folder: their entries are checked, not
        // their files again.
        try folder.requireAgreement(manifest, depth: { $0 == released.version ? .contents : .listed })
        recordPublished(released)
        phases.done("published, and the folder checked again")
        return ReleaseResult(
            released: released, manifest: manifest, verification: verification, checks: checks,
            completedInterruptedVersion: completed, removedLeftovers: leftovers)
    }

    /// Builds a version into `building/N/`: the client database and the deltas `DeltaChainPlan`
    /// renders, from one state of the master; then, outside the read transaction, the database's
    /// indexes, gzip and hashes, and the deltas joined from the releases in `published`.
    /// With `checks`, refuses a version that has error-level findings no waiver accepts.
    ///
    /// Two connections read the state: this one fills the client tables and ends its read, so
    /// that the file's indexes and gzip begin, while a twin renders the deltas (and hashes the
    /// newest version's content): the two halves overlap instead of running one after the other.
    private func build(version requested: Int?, into building: ReleaseFolder, beside published: PublishedReleases,
                       spacing: Int, checks: CheckLimits?, step: (ReleaseStep) throws -> Void) throws -> (ReleasedVersion, CheckTally?) {
        var phases = PhaseLog()
        try FileManager.default.createDirectory(atPath: building.path, withIntermediateDirectories: true)
        // The version folder is named once the version is known (inside the read transaction).
        let scratchDatabase = building.filePath("stations.sqlite")
        var checkTally: CheckTally?
        var carryOver: ReleasedFile?
        var clientSchema = 1
        var splits: [StationSplit] = []
        let abandoned = BuildAbandonment()
        let deltaRendering = DeltaRendering(published: published, building: building, spacing: spacing, abandoned: abandoned)
        let handOff = DeltaHandOff()
        let (version, rows, ownDeltas, twin, twinHashes) = try readingOneState(attaching: scratchDatabase, alongside: { db -> TwinBuild in
            try Self.buildOnTheTwin(db, requested: requested, building: building, rendering: deltaRendering, handOff: handOff)
        }, handing: { db, twin in
            do {
                let newest = try Self.dataVersion(db)
                guard newest > 0 else { throw ReleaseError.nothingImported }
                let version = requested ?? newest
                guard (0...newest).contains(version) else { throw ReleaseError.noSuchVersion(requested: version, newest: newest) }
                if let checks, version > 0 {
                    Progress.phase("checking version \(version)")
                    let outcome = try MasterDatabase.releaseChecks(db, version: version, newest: newest, limits: checks)
                    if !outcome.blocking.isEmpty { throw ReleaseError.checksFailed(version: version, outcome.blocking) }
                    checkTally = outcome.tally
                }
                try FileManager.default.createDirectory(atPath: building.filePath("\(version)"), withIntermediateDirectories: true)
                Progress.phase("building the client database of version \(version)")
                let rows = try ReleaseDatabaseBuilder.fill(version: version, newest: newest, db)
                clientSchema = try ClientSchema.version(atData: version, db)
                try step(.clientTablesBuilt)
                // Without a twin (another writer held the master's lock a moment), the deltas are this connection's.
                let ownDeltas = twin == nil ? try deltaRendering.render(db, version: version, newest: newest) : nil
                carryOver = try Self.writeCarryOver(version, into: building, db)
                splits = try UpdateLog.splits(db, after: 0, through: version)
                return (version, rows, ownDeltas, twin, try twin != nil && Self.masterHoldsTheFilesValues(db, version: version, newest: newest))
            } catch {
                // The error is told once the twin has stopped: it renders no more deltas.
                abandoned.abandon()
                throw error
            }
        })
        // Nothing of this build outlives it, whatever fails from here.
        defer { _ = try? twin?.wait() }
        // A folder that cannot take this release is refused before the indexes and the gzip.
        let existing = try published.manifest.wait()?.manifest
        try published.folder.requireOwnership(of: version, manifest: existing)
        let older = existing?.versions ?? []
        // A twin that ended without handing deltas over (it could not begin) has its own error to tell.
        twin?.whenDone { handOff.deliver(.failure(CancellationError())) }
        phases.done("client tables")
        // The twin reports nothing (progress is this task's): its work is named with this one's.
        Progress.phase(twin == nil ? "indexing, hashing and compressing" : "indexing and compressing the database, writing deltas beside it")
        let databasePath = ReleaseLayout.database(version)
        try AtomicFile.moveIntoPlace(scratchDatabase, building.filePath(databasePath), replacing: false)
        // Without the twin's, the hash reads a copy of the file's tables beside the indexes and
        // the gzip, which uses every core and hashes the file's bytes in the same read. The copy
        // stays outside the version folder, which is what gets published.
        let hashing = twinHashes ? nil : try ReleaseDatabaseBuilder.hashInBackground(
            building.filePath(databasePath), copyingTo: building.filePath("hashed.sqlite"))
        defer { _ = try? hashing?.wait() }
        let deflating = DeflatingAhead(file: building.filePath(databasePath), settings: .database)
        let compressed = Result {
            defer { _ = deflating.finish() }
            try ReleaseDatabaseBuilder.complete(building.filePath(databasePath), version: version, besideOtherWork: true)
            return try ParallelGzip.compress(file: building.filePath(databasePath), to: building.filePath(ReleaseLayout.databaseGzip(version)),
                                       deflatedAhead: deflating.finish())
        }
        phases.done("indexes, database sha256 and gzip (\((try? compressed.get())?.blocksTakenAhead ?? 0) blocks deflated ahead)")
        // The twin's deltas as soon as they are written: the joins are made while it may still hash.
        if twin != nil { Progress.phase("finishing the deltas") }
        let rendered: RenderedDeltas
        do {
            rendered = try ownDeltas ?? handOff.wait()
        } catch {
            _ = try twin?.wait()
            throw error
        }
        phases.done("deltas, after the gzip")
        try step(.deltasWritten)
        let gzipped = try compressed.get()
        let database = ReleasedFile(path: databasePath, bytes: try Self.size(of: building.filePath(databasePath)), sha256: gzipped.sourceSha256)
        let databaseGzip = ReleasedFile(path: ReleaseLayout.databaseGzip(version), bytes: gzipped.bytes, sha256: gzipped.sha256)
        var (deltas, downloads) = try Self.publishedDeltas(
            rendered, version: version, databaseGzip: databaseGzip, carryOver: carryOver,
            joiningThrough: (published.folder, older), building: building, phases: &phases)
        // Awaited even when the indexes, the gzip or a join failed: nothing of this build outlives it.
        let twinBuild = Result { try twin?.wait() }
        let backgroundHash = Result { try hashing?.wait() }
        phases.done("content hash")
        guard let contentHash = try backgroundHash.get() ?? twinBuild.get()?.contentHash else {
            preconditionFailure("a twin that began hashes when this connection lets it")
        }
        deltas.sort { $0.from < $1.from }
        downloads.sort { $0.from < $1.from }
        return (ReleasedVersion(
            version: version, database: database, databaseGzip: databaseGzip,
            rows: rows, contentHash: contentHash, deltas: deltas, carryOver: carryOver, downloads: downloads,
            clientSchema: clientSchema, splits: splits), checkTally)
    }

    /// The twin's half of a build: the deltas, handed over as soon as they are written, then the
    /// content hash of the newest version, from the master's tables when they hold the file's values.
    private static func buildOnTheTwin(_ db: Database, requested: Int?, building: ReleaseFolder, rendering: DeltaRendering,
                                       handOff: DeltaHandOff) throws -> TwinBuild {
        let newest = try dataVersion(db)
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
        let hash = try masterHoldsTheFilesValues(db, version: version, newest: newest)
            ? ContentHash.compute(db, clientSchema: ClientSchema.version(atData: version, db)) : nil
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
    private static func masterHoldsTheFilesValues(_ db: Database, version: Int, newest: Int) throws -> Bool {
        try version == newest && ClientSchema.declaresTheMastersTypes(db, clientSchema: ClientSchema.version(atData: version, db))
    }
}

/// What the twin connection of a build hands back once it ends (its deltas went by `DeltaHandOff`):
/// the content hash of the newest version, nil when the master's tables do not hold the file's values.
private struct TwinBuild: Sendable {
    var contentHash: String?
}

/// The deltas the twin renders, handed over as soon as they are written (its content hash
/// follows them), or the error that stopped it.
private final class DeltaHandOff: Sendable {
    private let delivered = Mutex<Result<RenderedDeltas, Error>?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    /// The first delivery counts; a later one (the twin's end, after its deltas) is ignored.
    func deliver(_ result: Result<RenderedDeltas, Error>) {
        let isFirst = delivered.withLock { slot in
            guard case .none = slot else { return false }
            slot = result
            return true
        }
        if isFirst { ready.signal() }
    }

    func wait() throws -> RenderedDeltas {
        ready.wait()
        ready.signal()
        return try delivered.withLock { $0! }.get()
    }
}

/// The deltas a release rendered, and the plan of the rest.
private struct RenderedDeltas: Sendable {
    var plan: DeltaChainPlan
    var written: [(from: Int, path: String, delta: WrittenDelta)]
}

/// The releases already in a folder: its manifest, read and checked (and its lineage compared)
/// on another thread while the build begins.
private struct PublishedReleases: Sendable {
    let folder: ReleaseFolder
    /// With the bytes it was read from, from which the next manifest is written.
    let manifest: BackgroundTask<ManifestFile?>

    /// The folder's releases, once its manifest is read; its error if it cannot take this release.
    func versions() throws -> [ReleasedVersion] { try manifest.wait()?.manifest.versions ?? [] }
}

/// Renders the deltas of a release (`DeltaChainPlan`) into its build folder, on whichever
/// connection reads the release's state.
private struct DeltaRendering: Sendable {
    let published: PublishedReleases
    let building: ReleaseFolder
    let spacing: Int
    let abandoned: BuildAbandonment

    func render(_ db: Database, version: Int, newest: Int) throws -> RenderedDeltas {
        let published = (folder: published.folder, versions: try published.versions())
        // Version 0 is no client: a new install downloads the database.
        var plan = DeltaChainPlan.make(version: version, released: published.versions, spacing: spacing) { delta in
            GzipJoin.isJoinable(published.folder.filePath(delta.file.path))
        }
        var written: [(from: Int, path: String, delta: WrittenDelta)] = []
        func render(_ froms: [Int]) throws {
            guard !froms.isEmpty else { return }
            Progress.phase("rendering the deltas' statements")
            let writer = try DeltaWriter.prepare(db, froms: froms, to: version, newest: newest)
            Progress.phase("writing deltas", total: froms.count)
            for (index, from) in froms.enumerated() {
                if abandoned.isAbandoned { throw CancellationError() }
                Progress.update(index)
                let deltaPath = ReleaseLayout.delta(from: from, to: version)
                written.append((from, deltaPath, try MasterDatabase.writeDelta(
                    db, from: from, with: writer, gzip: true, transaction: false, into: .file(building.filePath(deltaPath)))))
            }
            try writer.finish(db)
        }
        try render(plan.rendered)
        // A join larger than a database (the newest release's, this one's being unknown yet)
        // is rendered instead: rows changed back and forth on both sides of the step make the
        // join large and the delta itself small (connections added, then removed).
        if let databaseBytes = published.versions.last(where: { $0.version < version })?.databaseGzip.bytes {
            let own = Dictionary(written.map { ($0.from, $0.delta.gzipBytes) }, uniquingKeysWith: { first, _ in first })
            let olderDeltas = Dictionary(published.versions.map { ($0.version, $0.deltas) }, uniquingKeysWith: { first, _ in first })
            let large = plan.joinable.filter { from, via in
                guard let first = olderDeltas[via]?.first(where: { $0.from == from }), let second = own[via] else { return true }
                return GzipJoin.joinedSize([first.file.bytes, second]) > databaseBytes
            }.keys.sorted()
            for from in large { plan.joinable[from] = nil }
            try render(large)
        }
        return RenderedDeltas(plan: plan, written: written)
    }
}

/// Set when the build fails on its main connection (a version's checks): the twin renders no
/// more deltas, so the error is told without waiting for them.
private final class BuildAbandonment: Sendable {
    private let state = Mutex(false)
    func abandon() { state.withLock { $0 = true } }
    var isAbandoned: Bool { state.withLock { $0 } }
}
