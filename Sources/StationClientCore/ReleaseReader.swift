import Foundation
import StationManifest
import StationSignatures

/// The newest release of a folder, read and verified exactly as a phone verifies it, for a
/// consumer that keeps its own record of what it accepted: the web service's database
/// (`station-admin sync-postgres`) records it in a table of its own, a phone in its SQLite file.
///
///     let reader = ReleaseReader(configuration: .init(source: FolderReleaseSource(folder: folder), keys: keys))
///     let release = try await reader.newest(accepted: recordedInMyDatabase)
///     let file = try await reader.downloadDatabase(of: release, into: scratchFolder)
public struct ReleaseReader: Sendable {
    /// Where the folder is read from, the keys, and the limits: a phone's configuration.
    public let configuration: StationUpdater.Configuration

    /// A reader of `configuration.source`, trusting `configuration.keys`.
    public init(configuration: StationUpdater.Configuration) {
        self.configuration = configuration
    }

    /// The manifest's newest version, verified against what the consumer accepted before
    /// (nothing, the first time): keys, dataset, sequence (no rollback), `published_at`, expiry,
    /// unless the folder is unsigned and `configuration.allowsUnsigned`.
    ///
    /// - Throws: `StationClientError` (`.refused` for a manifest that is not trusted).
    public func newest(accepted: AcceptedRelease?) async throws -> VerifiedRelease {
        let record = accepted.map { TrustRecord(sequence: $0.sequence, publishedAt: $0.publishedAt, dataset: $0.dataset) } ?? TrustRecord()
        let manifest = try await Self.verifiedManifest(configuration, record: record)
        guard let newest = manifest.index.versions.first(where: { $0.version == manifest.index.newest }) else {
            throw StationClientError.badManifest(path: "manifest.json", reason: "newest \(manifest.index.newest) is not among its versions")
        }
        let accepting = manifest.signed.map { record.accepting($0) } ?? record
        return VerifiedRelease(
            version: newest.version, database: newest.database, databaseGzip: newest.databaseGzip, splits: newest.splits ?? [],
            deltas: newest.deltas.filter { delta in newest.downloads.contains { $0.from == delta.from && $0.kind == .delta } },
            olderDatabases: Dictionary(manifest.index.versions.filter { $0.version != newest.version }.map { ($0.version, ($0.database, $0.databaseGzip)) },
                                       uniquingKeysWith: { first, _ in first }),
            contentHashes: Dictionary(manifest.index.versions.map { ($0.version, $0.contentHash) }, uniquingKeysWith: { first, _ in first }),
            manifestSHA256: manifest.sha256,
            accepting: AcceptedRelease(sequence: accepting.sequence, publishedAt: accepting.publishedAt, dataset: accepting.dataset),
            isSigned: manifest.signed != nil)
    }

    /// Downloads the release's client database (its gzip, resumed where a part was kept) into
    /// `folder`, inflates it and checks its size and SHA-256 against the signed manifest.
    ///
    /// - Returns: the path of the client database.
    public func downloadDatabase(of release: VerifiedRelease, into folder: String) async throws -> String {
        try await download(version: release.version, database: release.database, gzip: release.databaseGzip, into: folder)
    }

    /// The SQL that brings a client database at `version` to the release, when the release
    /// offers a delta from it (`downloads`): downloaded into `folder`, inflated and checked against
    /// the signed hashes, as a phone checks it; nil when a phone at `version` downloads the database.
    public func downloadDelta(from version: Int, of release: VerifiedRelease, into folder: String) async throws -> (sql: Data, gzipBytes: Int)? {
        guard let delta = release.deltas.first(where: { $0.from == version }) else { return nil }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let gzip = (folder as NSString).appendingPathComponent("delta-\(version)-to-\(release.version).sql.gz")
        defer { try? FileManager.default.removeItem(atPath: gzip) }
        let downloader = ResumableDownload(source: configuration.source, chunkBytes: configuration.partBytes, limit: configuration.maximumDownloadBytes,
                                           limits: configuration.transferLimits)
        _ = try await downloader.fetch(delta.file, to: gzip, progress: { _ in }) { _ in }
        return (try delta.verifiedSQL(inflating: gzip), delta.file.bytes)
    }

    /// The same for an older version the folder still keeps, signed by the same manifest; nil
    /// when the folder no longer lists it.
    public func downloadDatabase(ofVersion version: Int, listedIn release: VerifiedRelease, into folder: String) async throws -> String? {
        guard let files = release.olderDatabases[version] else { return nil }
        return try await download(version: version, database: files.database, gzip: files.gzip, into: folder)
    }

    private func download(version: Int, database signed: ReleaseIndex.File, gzip signedGzip: ReleaseIndex.File, into folder: String) async throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let gzip = (folder as NSString).appendingPathComponent("stations-\(version).sqlite.gz")
        let database = (folder as NSString).appendingPathComponent("stations-\(version).sqlite")
        let downloader = ResumableDownload(source: configuration.source, chunkBytes: configuration.partBytes, limit: configuration.maximumDownloadBytes,
                                           limits: configuration.transferLimits)
        _ = try await downloader.fetch(signedGzip, to: gzip, progress: { _ in }) { _ in }
        let inflated = try GzipFile.inflate(gzip, to: database, limit: signed.bytes, name: signedGzip.path)
        guard inflated.bytes == signed.bytes, inflated.sha256 == signed.sha256 else {
            try? FileManager.default.removeItem(atPath: database)
            try? FileManager.default.removeItem(atPath: gzip)
            throw StationClientError.hashDiffers(path: signed.path)
        }
        return database
    }

    /// The manifest's bytes verified against `record` (what the consumer accepted before).
    static func verifiedManifest(_ configuration: StationUpdater.Configuration, record: @autoclosure () throws -> TrustRecord) async throws -> StationUpdater.VerifiedManifest {
        let source = configuration.source
        let limit = configuration.maximumManifestBytes
        guard let bytes = try await source.whole("manifest.json", limit: limit, limits: configuration.transferLimits) else {
            throw StationClientError.http(path: "manifest.json", status: 404)
        }
        let signatures = try await source.whole(ManifestSignatures.fileName, limit: limit, limits: configuration.transferLimits)
        let sha256 = ManifestSignatures.sha256(bytes)
        if signatures == nil && configuration.allowsUnsigned {
            return StationUpdater.VerifiedManifest(index: try ReleaseIndex.decode(bytes), signed: nil, sha256: sha256)
        }
        let record = try record()
        let trust = ManifestTrust(keys: configuration.keys, dataset: configuration.dataset ?? record.dataset,
                                  acceptedSequence: record.sequence, newestPublishedAt: record.publishedAtDate)
        let signed: SignedManifest
        do {
            signed = try trust.check(manifest: bytes, signatures: signatures, now: configuration.now())
        } catch {
            throw StationClientError.refused(error)
        }
        return StationUpdater.VerifiedManifest(index: try ReleaseIndex.decode(bytes), signed: signed, sha256: sha256)
    }
}

/// The newest release of a folder as `ReleaseReader` verified it.
public struct VerifiedRelease: Sendable {
    /// The data version.
    public let version: Int
    /// The client database: its size and SHA-256, signed.
    public let database: ReleaseIndex.File
    /// The same, gzipped: what is downloaded.
    public let databaseGzip: ReleaseIndex.File
    /// Every station split through `version`, in the order recorded (manifest format 6 on).
    public let splits: [ReleaseSplit]
    /// The deltas a client at an older version downloads (those `downloads` names), by the
    /// version each starts from.
    public let deltas: [ReleaseIndex.Delta]
    /// The client databases of the older versions the folder keeps, by version.
    public let olderDatabases: [Int: (database: ReleaseIndex.File, gzip: ReleaseIndex.File)]
    /// The signed content hash (`ReleaseContent`) of every version the folder lists, the newest
    /// included, by version: what a database's master tables are weighed against.
    public let contentHashes: [Int: String]
    /// SHA-256 of the manifest's bytes.
    public let manifestSHA256: String
    /// What the consumer records once it has applied the release: the next check starts from it.
    public let accepting: AcceptedRelease
    /// Whether the manifest was signed (false only when the configuration allows unsigned folders).
    public let isSigned: Bool

    /// The splits after data version `version`, in the order recorded.
    public func splits(after version: Int) -> [ReleaseSplit] { splits.filter { $0.version > version } }
}
