import Foundation
import GRDB
import StationManifest
import StationSignatures
import StationSQLite

/// Updates an app's database from a release folder by any of the three paths (docs/clients.md,
/// "How a phone updates"), without losing anything of the app's.
///
/// ```swift
/// let updater = StationUpdater(database: databaseURL, configuration: .init(
///     source: HTTPReleaseSource(baseURL: URL(string: "https://cdn.example/stations/")!),
///     keys: [try TrustedKey(publicKeyLine: "ed25519 3f2a9c41d07e8b56 MCowBQYDK2VwAyEA…")],
///     dataset: "4820f879-dd32-4afd-bfde-2057fac27097"))
/// let plan = try await updater.check()
/// if plan.method != .upToDate { try await updater.update(plan, appData: moveVisitsAcrossSplits) }
/// ```
///
/// - One update of a database at a time, across processes (`<database>.lock`); a second waits up
///   to `lockTimeout`, then gets `busy`.
/// - The signed manifest is checked first (`ManifestTrust`), against what the database itself
///   records of the manifests it accepted; every byte read is bounded by what the manifest
///   says; every file's size and SHA-256 is checked before it is inflated or run.
/// - A delta runs in one transaction with the app's hook and the trust record, and must leave
///   the manifest's version. The full and bundled paths replace the master tables inside the
///   database file itself (``InPlaceReplacement``): the app's tables, indexes, triggers and views
///   stay, and so do its open connections, its WAL and anything it writes meanwhile.
/// - A kill at any instant leaves the old content or the new; the next launch's update proceeds.
public struct StationUpdater: Sendable {
    /// How an updater reaches and trusts releases.
    public struct Configuration: Sendable {
        /// Where the release folder is read from.
        public var source: any ReleaseSource
        /// The pinned keys: during a rotation, the old and the new.
        public var keys: [TrustedKey]
        /// The app's dataset; nil pins the first accepted manifest's.
        public var dataset: String?
        /// Accept a folder without signatures (only for an app that opts out of signing).
        public var allowsUnsigned: Bool
        /// A larger file is refused before it is downloaded.
        public var maximumDownloadBytes: Int
        /// A manifest (or its signatures) larger than this is refused as it arrives, unparsed.
        public var maximumManifestBytes: Int
        /// Files are fetched in ranges of this size, each synced: what a cut connection loses.
        public var partBytes: Int
        /// How slowly a transfer may go.
        public var transferLimits: TransferLimits
        /// How long an update waits for another update of the same database (another process's).
        public var lockTimeout: TimeInterval
        /// How long a statement waits for another connection's write transaction on the database.
        public var busyTimeout: TimeInterval
        /// The clock that expiry is judged by (the tests' seam).
        package var now: @Sendable () -> Date = { Date() }
        /// Told each step (the crash tests' seam).
        package var onStep: @Sendable (UpdateStep) -> Void = { _ in }

        /// Releases from `source`, trusted when signed by one of `keys`.
        public init(source: any ReleaseSource, keys: [TrustedKey], dataset: String? = nil, allowsUnsigned: Bool = false,
                    maximumDownloadBytes: Int = 1 << 30, maximumManifestBytes: Int = 1 << 20, partBytes: Int = 4 << 20,
                    transferLimits: TransferLimits = TransferLimits(), lockTimeout: TimeInterval = 30, busyTimeout: TimeInterval = 10) {
            self.source = source
            self.keys = keys
            self.dataset = dataset
            self.allowsUnsigned = allowsUnsigned
            self.maximumDownloadBytes = maximumDownloadBytes
            self.maximumManifestBytes = maximumManifestBytes
            self.partBytes = partBytes
            self.transferLimits = transferLimits
            self.lockTimeout = lockTimeout
            self.busyTimeout = busyTimeout
        }
    }

    /// The app's database (a missing file is a new install).
    public let database: URL
    /// How it reaches and trusts releases.
    public let configuration: Configuration

    private var path: String { database.path }
    private var files: WorkFiles { WorkFiles(database: path) }

    /// An updater of the database at `database`. Nothing is read or written until it is used.
    public init(database: URL, configuration: Configuration) {
        self.database = database
        self.configuration = configuration
    }

    /// The data version of the database (0: none yet). A journal a killed update left is rolled
    /// back first, as any writer would.
    public func currentVersion() throws(StationClientError) -> Int {
        guard FileManager.default.fileExists(atPath: path) else { return 0 }
        do {
            let queue = try DatabaseQueue(path: path, configuration: connectionConfiguration)
            defer { try? queue.close() }
            return try queue.read { try Int.fetchOne($0, sql: "PRAGMA user_version") ?? 0 }
        } catch {
            throw StationClientError.converted(error, path: path)
        }
    }

    /// What the database records of the newest manifest it accepted; nil when it accepted none.
    public func acceptedRelease() throws(StationClientError) -> AcceptedRelease? {
        let record: TrustRecord
        do { record = try trustRecord() } catch { throw StationClientError.converted(error, path: path) }
        guard record != TrustRecord() else { return nil }
        return AcceptedRelease(sequence: record.sequence, publishedAt: record.publishedAt, dataset: record.dataset)
    }

    /// What `update` would do, from the verified manifest.
    public func check() async throws -> UpdatePlan {
        let manifest = try await verifiedManifest()
        return try plan(manifest, from: try currentVersion())
    }

    /// Brings the database to the newest release, carrying out `plan` (from ``check()``), or the
    /// plan the manifest gives now when nil. A plan that another process of the app made
    /// obsolete by bringing the database to the newest is carried out as what it now is,
    /// `upToDate`.
    ///
    /// - Parameter appData: the app's own update of its tables, in the update's transaction.
    /// - Throws: `StationClientError` (see its `category`), or `CancellationError`; the database
    ///   is then as it was.
    @discardableResult
    public func update(_ plan: UpdatePlan? = nil, appData: AppDataHook? = nil) async throws -> UpdateOutcome {
        try await update(plan, appData: appData, progress: nil)
    }

    /// ``update(_:appData:)`` started, with its progress to follow.
    public func startUpdate(_ plan: UpdatePlan? = nil, appData: AppDataHook? = nil) -> RunningUpdate<UpdateOutcome> {
        RunningUpdate { [self] continuation in try await update(plan, appData: appData, progress: continuation) }
    }

    private func update(_ plan: UpdatePlan?, appData: AppDataHook?, progress: AsyncStream<UpdateProgress>.Continuation?) async throws -> UpdateOutcome {
        let lock = try await UpdateLock.acquire(for: path, timeout: configuration.lockTimeout)
        defer { withExtendedLifetime(lock) {} }
        try recover()
        let manifest = try await verifiedManifest()
        try recordAcceptance(of: manifest)
        let current = try self.plan(manifest, from: try currentVersion())
        let chosen = try plan.map { try $0.confirmed(against: current) } ?? current
        guard let release = manifest.index.newestVersion else {
            throw StationClientError.badManifest(path: "manifest.json", reason: "no entry for version \(manifest.index.newest)")
        }
        let report = ProgressReport(continuation: progress, path: chosen.method == .delta ? .delta : .full)
        var download = ResumableDownload.Outcome()
        switch chosen.method {
        case .upToDate:
            // What a process killed after its update left: downloads no update needs any more.
            try files.removeAll()
        case .delta:
            guard let delta = release.deltas.first(where: { $0.from == chosen.from }) else {
                throw StationClientError.badManifest(path: "manifest.json", reason: "no delta from \(chosen.from) in version \(release.version)")
            }
            download = try await applyDelta(delta, of: release, manifest: manifest, appData: appData, report: report)
        case .full:
            download = try await installDownloaded(release, from: chosen.from, manifest: manifest, appData: appData, report: report)
        }
        return UpdateOutcome(plan: chosen, downloadedBytes: download.downloaded, resumedAt: download.resumedAt)
    }

    /// The app-update path, at launch: when the bundled database is newer than the app's, its
    /// master tables replace the app's, with the records carried over (and the splits after the
    /// app's version replayed), the app's tables kept and `appData` run; nothing when it is not
    /// newer. Returns whether it installed.
    @discardableResult
    public func installBundled(_ bundle: BundledRelease, appData: AppDataHook? = nil) async throws -> Bool {
        try await installBundled(bundle, appData: appData, progress: nil)
    }

    /// ``installBundled(_:appData:)`` started, with its progress to follow.
    public func startInstallingBundled(_ bundle: BundledRelease, appData: AppDataHook? = nil) -> RunningUpdate<Bool> {
        RunningUpdate { [self] continuation in try await installBundled(bundle, appData: appData, progress: continuation) }
    }

    private func installBundled(_ bundle: BundledRelease, appData: AppDataHook?, progress: AsyncStream<UpdateProgress>.Continuation?) async throws -> Bool {
        let lock = try await UpdateLock.acquire(for: path, timeout: configuration.lockTimeout)
        defer { withExtendedLifetime(lock) {} }
        try recover()
        let from = try currentVersion()
        guard try bundle.version() > from else { return false }
        try refuseReadOnly()
        // Checked and used as one file: the copy, in the update's private folder.
        let bundled = try bundle.copied(to: files.download("bundled.sqlite"))
        guard bundled.version > from else { return false }
        let context = UpdateContext(path: .bundled, from: from, to: bundled.version, splits: bundled.splits.filter { $0.version > from })
        try replaceInPlace(release: bundled.path, contentHash: bundled.contentHash, context: context, appData: appData, trust: nil,
                           report: ProgressReport(continuation: progress, path: .bundled))
        return true
    }

    // MARK: The manifest and the plan

    /// A manifest whose signatures verified (or an unsigned one the app opted into), with its
    /// SHA-256 for plans.
    struct VerifiedManifest {
        let index: ReleaseIndex
        let signed: SignedManifest?
        let sha256: String
    }

    private func verifiedManifest() async throws -> VerifiedManifest {
        try await ReleaseReader.verifiedManifest(configuration, record: try trustRecord())
    }

    /// Records a manifest that verified before anything is downloaded, in a transaction of its
    /// own (and again in the update's): an update cut after it still leaves the database
    /// refusing any older manifest, so that a mirror that cut it cannot then offer an older
    /// release with a valid path forward (docs/clients.md, step 3). Nothing is written when the
    /// record already holds it, or for a new install (no file yet; its install records it).
    private func recordAcceptance(of manifest: VerifiedManifest) throws {
        guard let signed = manifest.signed, FileManager.default.fileExists(atPath: path) else { return }
        let record = try trustRecord()
        guard record.accepting(signed) != record else { return }
        try write { db in try TrustRecord.read(db, database: path).accepting(signed).write(db) }
    }

    /// What the database records of the manifests it accepted (nothing, for a new install).
    private func trustRecord() throws -> TrustRecord {
        guard FileManager.default.fileExists(atPath: path) else { return try TrustRecord.legacy(of: path) }
        let queue = try DatabaseQueue(path: path, configuration: connectionConfiguration)
        defer { try? queue.close() }
        return try queue.read { try TrustRecord.read($0, database: path) }
    }

    private func plan(_ manifest: VerifiedManifest, from version: Int) throws -> UpdatePlan {
        let index = manifest.index
        guard let release = index.newestVersion else {
            throw StationClientError.badManifest(path: "manifest.json", reason: "no entry for version \(index.newest)")
        }
        let full = release.databaseGzip.bytes
        if version == index.newest {
            return UpdatePlan(method: .upToDate, from: version, to: version, downloadBytes: 0, fullDownloadBytes: 0, manifestSHA256: manifest.sha256)
        }
        guard version < index.newest else { throw StationClientError.newerThanRelease(database: version, newest: index.newest) }
        if let download = release.downloads.first(where: { $0.from == version }), download.kind == .delta,
           let delta = release.deltas.first(where: { $0.from == version }) {
            return UpdatePlan(method: .delta, from: version, to: index.newest, downloadBytes: delta.file.bytes, fullDownloadBytes: full,
                              manifestSHA256: manifest.sha256)
        }
        return UpdatePlan(method: .full, from: version, to: index.newest, downloadBytes: full, fullDownloadBytes: full, manifestSHA256: manifest.sha256)
    }

    // MARK: The paths

    private var downloader: ResumableDownload {
        ResumableDownload(source: configuration.source, chunkBytes: configuration.partBytes, limit: configuration.maximumDownloadBytes,
                          limits: configuration.transferLimits)
    }

    private func step(_ step: UpdateStep) throws { configuration.onStep(step) }

    private func applyDelta(_ delta: ReleaseIndex.Delta, of release: ReleaseIndex.Version, manifest: VerifiedManifest, appData: AppDataHook?,
                            report: ProgressReport) async throws -> ResumableDownload.Outcome {
        try refuseReadOnly()
        let gzip = try files.download("delta-from-\(delta.from).sql.gz")
        let outcome = try await downloader.fetch(delta.file, to: gzip, progress: report.downloading(delta.file)) { _ in try step(.downloadedPart) }
        try step(.downloaded)
        let text = try delta.verifiedSQL(inflating: gzip)
        report.installing(0, of: text.count, .bytes)
        let context = UpdateContext(path: .delta, from: delta.from, to: release.version, splits: try release.splits(after: delta.from))
        try write { db in
            // The delta's own guard refuses a database not at `from`: a delta never runs twice.
            try db.execute(sql: String(decoding: text, as: UTF8.self))
            let reached = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
            guard reached == release.version else { throw StationClientError.wrongVersionAfterDelta(expected: release.version, actual: reached) }
            // The right version is not yet the signed content: a release tool's bug can make a
            // delta whose every hash is true and whose rows are not the release's. Only the
            // release's columns: an app may have added its own to a release table.
            let installed = try ReleaseContentHash.compute(db, listed: release.contentColumns, version: release.version, expected: release.contentHash)
            guard installed == release.contentHash else {
                throw StationClientError.contentDiffers(version: release.version, expected: release.contentHash, actual: installed)
            }
            try runAppData(appData, db, context)
            if let signed = manifest.signed { try TrustRecord.read(db, database: path).accepting(signed).write(db) }
            try step(.deltaRunUncommitted)
        }
        report.installing(text.count, of: text.count, .bytes)
        try step(.deltaCommitted)
        try files.removeAll()
        return outcome
    }

    private func installDownloaded(_ release: ReleaseIndex.Version, from version: Int, manifest: VerifiedManifest, appData: AppDataHook?,
                                   report: ProgressReport) async throws -> ResumableDownload.Outcome {
        try refuseReadOnly()
        let splits = try release.splits(after: version)
        let gzip = try files.download("stations.sqlite.gz")
        let outcome = try await downloader.fetch(release.databaseGzip, to: gzip, progress: report.downloading(release.databaseGzip)) { _ in
            try step(.downloadedPart)
        }
        try step(.downloaded)
        do {
            let inflated = try GzipFile.inflate(gzip, to: files.incoming, limit: release.database.bytes, name: release.databaseGzip.path) { bytes in
                report.inflating(bytes, of: release.database.bytes)
                if bytes % (1 << 16) == 0 { try step(.inflating) }
            }
            try checkInflated(inflated, release)
        } catch let error as StationClientError where error.category == .untrusted {
            try? FileManager.default.removeItem(atPath: gzip)
            throw error
        }
        let context = UpdateContext(path: .full, from: version, to: release.version, splits: splits)
        try replaceInPlace(release: files.incoming, contentHash: release.contentHash, context: context, appData: appData, trust: manifest.signed,
                           report: report)
        return outcome
    }

    private func checkInflated(_ inflated: (bytes: Int, sha256: String), _ release: ReleaseIndex.Version) throws {
        guard inflated.bytes == release.database.bytes, inflated.sha256 == release.database.sha256 else {
            try? FileManager.default.removeItem(atPath: files.incoming)
            throw StationClientError.hashDiffers(path: release.database.path)
        }
    }

    /// The full and bundled paths' end: the release database at `release` replaces the release's
    /// tables inside the database, in one transaction with the splits, the hook and the trust record.
    private func replaceInPlace(release: String, contentHash: String, context: UpdateContext, appData: AppDataHook?,
                                trust signed: SignedManifest?, report: ProgressReport) throws {
        let replacement = InPlaceReplacement(database: path, release: release, busyTimeout: configuration.busyTimeout)
        do {
            try replacement.install(version: context.to, contentHash: contentHash, splits: context.splits, onStep: step,
                                    progress: { report.installing($0, of: $1, .rows) }) { db in
                try runAppData(appData, db, context)
                if let signed { try TrustRecord.read(db, database: path).accepting(signed).write(db) }
            }
        } catch {
            throw StationClientError.wrapping(error, path: path)
        }
        try? FileManager.default.removeItem(atPath: TrustRecord.legacyFile(of: path))
        try step(.replaced)
        try files.removeAll()
    }

    private func runAppData(_ appData: AppDataHook?, _ db: Database, _ context: UpdateContext) throws {
        guard let appData else { return }
        do {
            try appData(db, context)
        } catch {
            throw StationClientError.appData(cause: error)
        }
    }

    // MARK: The database

    private var connectionConfiguration: GRDB.Configuration {
        var configuration = SQLiteDefences.configuration()
        configuration.busyMode = .timeout(self.configuration.busyTimeout)
        return configuration
    }

    /// Runs `body` in one immediate write transaction on the database.
    private func write(_ body: (Database) throws -> Void) throws {
        do {
            let queue = try DatabaseQueue(path: path, configuration: connectionConfiguration)
            defer { try? queue.close() }
            try queue.inTransaction(.immediate) { db in
                try body(db)
                return .commit
            }
        } catch {
            throw StationClientError.wrapping(error, path: path)
        }
        try? FileManager.default.removeItem(atPath: TrustRecord.legacyFile(of: path))
    }

    /// Refuses a database that cannot be written, before anything is downloaded: a full update
    /// never replaces (and makes writable) a file the app made read-only.
    /// A file without any write permission bit is read-only even to a process that could write
    /// it anyway (root).
    private func refuseReadOnly() throws {
        let folder = (path as NSString).deletingLastPathComponent
        if FileManager.default.fileExists(atPath: path) {
            let permissions = (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? 0
            if access(path, W_OK) != 0 || permissions & 0o222 == 0 { throw StationClientError.readOnly(database: path) }
        } else if access(folder.isEmpty ? "." : folder, W_OK) != 0 {
            throw StationClientError.readOnly(database: path)
        }
    }

    /// What a killed update left, cleared under the lock: an older library's swap finished or
    /// undone, scratch files removed (never a download's parts, which the next update resumes).
    private func recover() throws {
        do {
            try LegacySwap(database: path).recover()
            try files.removeScratch()
        } catch {
            throw StationClientError.wrapping(error, path: path)
        }
        try step(.locked)
    }
}
