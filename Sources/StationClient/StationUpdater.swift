import Foundation
import GRDB
import StationSignatures

/// What an update would do, before anything is downloaded.
public enum UpdatePlan: Equatable, Sendable {
    /// The phone is at the newest version.
    case upToDate(version: Int)
    /// The delta from the phone's version: `bytes` to download.
    case delta(from: Int, to: Int, bytes: Int)
    /// The full database (a new install, or a delta larger than the database): `bytes` to download.
    case full(from: Int, to: Int, bytes: Int)
}

/// The instants of an update, in order, at which `StationUpdater.Configuration.onStep` is told;
/// `station-phone` kills itself at one of them in the crash tests.
public enum UpdateStep: String, CaseIterable, Sendable {
    /// A part of a download was written and synced.
    case downloadedPart = "downloaded-part"
    /// A download is whole and its SHA-256 is the manifest's.
    case downloaded
    /// Another 64 KiB of the full database were inflated.
    case inflating
    /// The delta (and the app's statements) ran; the transaction is not committed yet.
    case deltaRunUncommitted = "delta-run-uncommitted"
    /// The delta committed; its downloaded files are not removed yet.
    case deltaCommitted = "delta-committed"
    /// The carry-over ran into the new file and committed; the working file is untouched.
    case carriedOver = "carried-over"
    case journalWritten = "journal-written"
    /// The working file was renamed aside; the new one is not in place yet.
    case oldSetAside = "old-set-aside"
    case swapped
}

/// What an update did.
public struct UpdateOutcome: Equatable, Sendable {
    public let plan: UpdatePlan
    /// Bytes fetched by this call (a resumed download fetches only the rest).
    public let downloadedBytes: Int
    /// Where the download resumed; 0 when it started from the beginning.
    public let resumedAt: Int
}

/// Updates a phone's database from a release folder by any of the three paths (docs/clients.md, "How a
/// phone updates"), safely:
///
/// ```swift
/// let updater = try StationUpdater(database: databaseURL.path, configuration: .init(
///     source: HTTPReleaseSource(baseURL: URL(string: "https://cdn.example/stations/")!),
///     keys: [try TrustedKey(publicKeyLine: "ed25519 3f2a9c41d07e8b56 MCowBQYDK2VwAyEA…")],
///     dataset: "4820f879-dd32-4afd-bfde-2057fac27097"))
/// switch try await updater.check() { case .upToDate: break; default: try await updater.update(alongside: appSync) }
/// ```
///
/// The signed manifest is checked first (`ManifestTrust`); every file's size and SHA-256 before it
/// is inflated or run; a delta runs in one transaction with the app's statements; a full database
/// is inflated beside the working one, the carry-over copies the user's records into it, and a
/// journaled rename swaps it in. Making an updater finishes or undoes a swap a killed process left.
public struct StationUpdater: Sendable {
    /// How an updater reaches and trusts releases.
    public struct Configuration: Sendable {
        public var source: any ReleaseSource
        /// The pinned keys: during a rotation, the old and the new.
        public var keys: [TrustedKey]
        /// The app's dataset; nil pins the first accepted manifest's.
        public var dataset: String?
        /// Accept a folder without signatures (only for an app that opts out of signing).
        public var allowsUnsigned: Bool
        /// A larger file is refused before it is downloaded.
        public var maximumDownloadBytes: Int
        /// Files are fetched in ranges of this size, each synced: what a cut connection loses.
        public var partBytes: Int
        public var now: @Sendable () -> Date
        /// Told each step (the crash tests' seam).
        public var onStep: @Sendable (UpdateStep) -> Void

        /// Releases from `source`, trusted when signed by one of `keys`.
        public init(source: any ReleaseSource, keys: [TrustedKey], dataset: String? = nil, allowsUnsigned: Bool = false,
                    maximumDownloadBytes: Int = 1 << 30, partBytes: Int = 4 << 20,
                    now: @escaping @Sendable () -> Date = { Date() }, onStep: @escaping @Sendable (UpdateStep) -> Void = { _ in }) {
            self.source = source
            self.keys = keys
            self.dataset = dataset
            self.allowsUnsigned = allowsUnsigned
            self.maximumDownloadBytes = maximumDownloadBytes
            self.partBytes = partBytes
            self.now = now
            self.onStep = onStep
        }
    }

    /// The app's working database (a missing file is a new install).
    public let databasePath: String
    public let configuration: Configuration
    private var swap: DatabaseSwap { DatabaseSwap(database: databasePath) }

    /// An updater of the database at `database`; finishes or undoes an interrupted swap first.
    public init(database: String, configuration: Configuration) throws {
        databasePath = database
        self.configuration = configuration
        try DatabaseSwap(database: database).recover()
    }

    /// The data version of the working database (0: none yet).
    public func currentVersion() throws -> Int {
        guard FileManager.default.fileExists(atPath: databasePath) else { return 0 }
        return try Self.version(of: databasePath)
    }

    /// What `update` would download, from the verified manifest.
    public func check() async throws -> UpdatePlan {
        try plan(try await verifiedIndex().index, from: try currentVersion())
    }

    /// Brings the working database to the newest release. `alongside` runs in the same transaction
    /// as the delta (or the carry-over): the app's own sync of its users' records.
    @discardableResult
    public func update(alongside: [String] = []) async throws -> UpdateOutcome {
        let (index, signed) = try await verifiedIndex()
        let version = try currentVersion()
        let plan = try plan(index, from: version)
        guard let release = index.newestVersion else { throw StationClientError.badManifest("no entry for version \(index.newest)") }
        var download = ResumableDownload.Outcome()
        switch plan {
        case .upToDate:
            // What a process killed after its update left: downloads no update needs any more.
            removeWorkFiles()
        case .delta(let from, _, _):
            guard let delta = release.deltas.first(where: { $0.from == from }) else {
                throw StationClientError.badManifest("no delta from \(from) in version \(release.version)")
            }
            download = try await applyDelta(delta, alongside: alongside)
        case .full(let from, _, _):
            download = try await installDownloaded(release, from: from, alongside: alongside)
        }
        if let signed {
            var state = TrustState.load(for: databasePath)
            state.sequence = max(state.sequence, signed.fields.sequence)
            state.publishedAt = max(state.publishedAt ?? signed.fields.publishedAt, signed.fields.publishedAt)
            state.dataset = state.dataset ?? signed.fields.dataset
            try state.save(for: databasePath)
        }
        return UpdateOutcome(plan: plan, downloadedBytes: download.downloaded, resumedAt: download.resumedAt)
    }

    /// The app-update path, at launch: when the bundled database is newer than the working one,
    /// the carry-over and the swap; nothing when it is not. Returns whether it installed.
    @discardableResult
    public func installBundled(database bundled: String, carryOver: String) throws -> Bool {
        let bundledVersion = try Self.version(of: bundled)
        guard bundledVersion > (try currentVersion()) else { return false }
        try? FileManager.default.removeItem(atPath: swap.incoming)
        try FileManager.default.copyItem(atPath: bundled, toPath: swap.incoming)
        if FileManager.default.fileExists(atPath: databasePath) {
            let script = try String(contentsOfFile: carryOver, encoding: .utf8)
            try carryOverAndSwap(script: script, alongside: [])
        } else {
            try swap.swap(onStep: step)
        }
        return true
    }

    // MARK: The steps

    /// The files an update downloads and inflates beside the database (never the database, its
    /// journal or the trust state).
    private func removeWorkFiles() {
        let directory = (databasePath as NSString).deletingLastPathComponent
        let name = (databasePath as NSString).lastPathComponent
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory)) ?? []
        for file in names where file.hasPrefix(name + ".delta-from-") || file.hasPrefix(name + ".incoming.gz")
            || file.hasPrefix(name + ".carry-over.sql") {
            try? FileManager.default.removeItem(atPath: (directory as NSString).appendingPathComponent(file))
        }
    }

    private func step(_ step: UpdateStep) throws { configuration.onStep(step) }

    private func verifiedIndex() async throws -> (index: ReleaseIndex, signed: SignedManifest?) {
        let source = configuration.source
        guard let manifest = try await source.whole("manifest.json") else { throw StationClientError.http(path: "manifest.json", status: 404) }
        let signatures = try await source.whole(ManifestSignatures.fileName)
        if signatures == nil && configuration.allowsUnsigned { return (try ReleaseIndex.decode(manifest), nil) }
        let state = TrustState.load(for: databasePath)
        let trust = ManifestTrust(keys: configuration.keys, dataset: configuration.dataset ?? state.dataset,
                                  acceptedSequence: state.sequence, newestPublishedAt: state.publishedAtDate)
        let signed: SignedManifest
        do {
            signed = try trust.check(manifest: manifest, signatures: signatures, now: configuration.now())
        } catch {
            throw StationClientError.refused(error)
        }
        return (try ReleaseIndex.decode(manifest), signed)
    }

    private func plan(_ index: ReleaseIndex, from version: Int) throws -> UpdatePlan {
        if version == index.newest { return .upToDate(version: version) }
        guard version < index.newest else { throw StationClientError.newerThanRelease(phone: version, newest: index.newest) }
        guard let release = index.newestVersion else { throw StationClientError.badManifest("no entry for version \(index.newest)") }
        if let download = release.downloads.first(where: { $0.from == version }), download.kind == "delta",
           let delta = release.deltas.first(where: { $0.from == version }) {
            return .delta(from: version, to: index.newest, bytes: delta.file.bytes)
        }
        return .full(from: version, to: index.newest, bytes: release.databaseGzip.bytes)
    }

    private var downloader: ResumableDownload {
        ResumableDownload(source: configuration.source, chunkBytes: configuration.partBytes, limit: configuration.maximumDownloadBytes)
    }

    private func applyDelta(_ delta: ReleaseIndex.Delta, alongside: [String]) async throws -> ResumableDownload.Outcome {
        let gzip = databasePath + ".delta-from-\(delta.from).sql.gz", sql = databasePath + ".delta-from-\(delta.from).sql"
        let outcome = try await downloader.fetch(delta.file, to: gzip) { _ in try step(.downloadedPart) }
        try step(.downloaded)
        let inflated = try GzipFile.inflate(gzip, to: sql)
        let text = try Data(contentsOf: URL(fileURLWithPath: sql))
        var offset = 0
        for part in delta.parts {
            guard offset + part.sqlBytes <= text.count,
                  ManifestSignatures.sha256(text[offset..<(offset + part.sqlBytes)]) == part.sqlSha256 else {
                throw StationClientError.hashDiffers(path: delta.file.path + " (its SQL)")
            }
            offset += part.sqlBytes
        }
        guard inflated.bytes == delta.sqlBytes, offset == text.count else {
            throw StationClientError.sizeDiffers(path: delta.file.path + " (its SQL)", actual: inflated.bytes, expected: delta.sqlBytes)
        }
        let queue = try DatabaseQueue(path: databasePath)
        do {
            try queue.inTransaction { db in
                // The delta's own guard refuses a database not at `from`: a delta never runs twice.
                try db.execute(sql: String(decoding: text, as: UTF8.self))
                for statement in alongside { try db.execute(sql: statement) }
                try step(.deltaRunUncommitted)
                return .commit
            }
        } catch let error as DatabaseError {
            try queue.close()
            throw StationClientError.database(error.description)
        }
        try queue.close()
        try step(.deltaCommitted)
        for path in [gzip, sql] { try? FileManager.default.removeItem(atPath: path) }
        return outcome
    }

    private func installDownloaded(_ release: ReleaseIndex.Version, from version: Int, alongside: [String]) async throws -> ResumableDownload.Outcome {
        let gzip = databasePath + ".incoming.gz"
        let outcome = try await downloader.fetch(release.databaseGzip, to: gzip) { _ in try step(.downloadedPart) }
        try step(.downloaded)
        var script: String?
        if version > 0 {
            guard let carryOver = release.carryOver else { throw StationClientError.noCarryOver(version: release.version) }
            let path = databasePath + ".carry-over.sql"
            _ = try await downloader.fetch(carryOver, to: path) { _ in }
            script = try String(contentsOfFile: path, encoding: .utf8)
        }
        let inflated = try GzipFile.inflate(gzip, to: swap.incoming) { _ in try step(.inflating) }
        guard inflated.bytes == release.database.bytes, inflated.sha256 == release.database.sha256 else {
            try? FileManager.default.removeItem(atPath: swap.incoming)
            throw StationClientError.hashDiffers(path: release.database.path)
        }
        if let script {
            try carryOverAndSwap(script: script, alongside: alongside)
        } else {
            try swap.swap(onStep: step)
        }
        for path in [gzip, databasePath + ".carry-over.sql"] { try? FileManager.default.removeItem(atPath: path) }
        return outcome
    }

    /// Runs the carry-over from the working database into `incoming` (attached), in one
    /// transaction with `alongside`, then swaps `incoming` in.
    private func carryOverAndSwap(script: String, alongside: [String]) throws {
        let queue = try DatabaseQueue(path: databasePath)
        do {
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ? AS incoming", arguments: [swap.incoming])
                try db.inTransaction {
                    for statement in alongside { try db.execute(sql: statement) }
                    try db.execute(sql: script)
                    return .commit
                }
                try db.execute(sql: "DETACH DATABASE incoming")
            }
        } catch let error as DatabaseError {
            try queue.close()
            try? FileManager.default.removeItem(atPath: swap.incoming)
            throw StationClientError.database(error.description)
        }
        try queue.close()
        try step(.carriedOver)
        try swap.swap(onStep: step)
    }

    static func version(of path: String) throws -> Int {
        var configuration = GRDB.Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { try Int.fetchOne($0, sql: "PRAGMA user_version") ?? 0 }
    }
}
