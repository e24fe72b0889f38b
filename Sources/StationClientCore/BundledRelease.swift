import Crypto
import Foundation
import GRDB
import StationFiles
import StationManifest
import StationSignatures
import StationSQLite

/// The release an app ships in its bundle, for the app-update path: the version's database and
/// the release folder's `manifest.json`, from which the install learns the splits after the app's
/// version (the app's hook is told them, and `completions` is copied across them).
///
/// Bundle exactly these two files of the release folder: `N/stations.sqlite` and `manifest.json`.
///
/// ```swift
/// let bundle = BundledRelease(database: Bundle.main.url(forResource: "stations", withExtension: "sqlite")!,
///                             manifest: Bundle.main.url(forResource: "manifest", withExtension: "json")!)
/// try await updater.installBundled(bundle, appData: moveVisitsAcrossSplits)
/// ```
public struct BundledRelease: Sendable {
    /// `N/stations.sqlite` of the release folder. It is copied into the update's private folder and
    /// checked against the manifest's SHA-256 before SQLite opens it.
    public var database: URL
    /// `manifest.json` of the same folder: it must have an entry for the database's version,
    /// with its splits and the database's size.
    public var manifest: URL

    /// The bundled release of these two files.
    public init(database: URL, manifest: URL) {
        self.database = database
        self.manifest = manifest
    }

    /// What an install needs of the bundle: the checked copy, its version and what its manifest
    /// entry signs of it.
    struct Contents {
        let path: String
        let version: Int
        let contentHash: String
        let splits: [ReleaseSplit]
    }

    /// The bundled database's version, read from its header's `user_version` field (bytes 60 to
    /// 63, big-endian): no SQL runs on a file before its SHA-256 is checked.
    func version() throws -> Int {
        guard let handle = FileHandle(forReadingAtPath: database.path) else {
            throw StationClientError.database(path: database.path, cause: POSIXError(.ENOENT))
        }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 100)) ?? Data()
        guard header.count == 100, header.prefix(16) == Data("SQLite format 3\u{0}".utf8) else {
            throw StationClientError.hashDiffers(path: database.path)
        }
        return header[60..<64].reduce(0) { $0 << 8 | Int($1) }
    }

    /// Copies the bundled database to `destination` (a file of the update's private folder),
    /// hashing what it copies, and returns the copy once its size and SHA-256 are the manifest's
    /// for its version: what the install attaches is the file that was checked.
    ///
    /// - Throws: `StationClientError.badManifest` (no entry for the version), `.sizeDiffers`,
    ///   `.hashDiffers`; the copy is removed then.
    func copied(to destination: String) throws -> Contents {
        guard let bytes = FileManager.default.contents(atPath: manifest.path) else {
            throw StationClientError.badManifest(path: manifest.path, reason: "cannot be read")
        }
        let index = try ReleaseIndex.decode(bytes)
        let copy: (bytes: Int, sha256: String)
        do {
            copy = try Self.copy(database.path, to: destination)
        } catch {
            try? FileManager.default.removeItem(atPath: destination)
            throw StationClientError.converted(error, path: destination)
        }
        do {
            let version = try BundledRelease(database: URL(fileURLWithPath: destination), manifest: manifest).version()
            guard let entry = index.version(version) else {
                throw StationClientError.badManifest(path: manifest.path, reason: "no entry for version \(version), the bundled database's")
            }
            guard copy.bytes == entry.database.bytes else {
                throw StationClientError.sizeDiffers(path: database.path, actual: copy.bytes, expected: entry.database.bytes)
            }
            guard copy.sha256 == entry.database.sha256 else { throw StationClientError.hashDiffers(path: database.path) }
            return Contents(path: destination, version: version, contentHash: entry.contentHash,
                            splits: try entry.splits(after: 0, manifest: manifest.path))
        } catch {
            try? FileManager.default.removeItem(atPath: destination)
            throw error
        }
    }

    /// Copies `source` to a new file of this user's at `destination` (never through a link),
    /// returning what it copied: its size and SHA-256.
    private static func copy(_ source: String, to destination: String) throws -> (bytes: Int, sha256: String) {
        try? FileManager.default.removeItem(atPath: destination)
        guard let input = FileHandle(forReadingAtPath: source) else { throw POSIXError(.ENOENT) }
        defer { try? input.close() }
        let output = FileHandle(fileDescriptor: try OwnFiles.open(destination, flags: O_WRONLY | O_TRUNC, create: true), closeOnDealloc: true)
        defer { try? output.close() }
        var hasher = SHA256()
        var total = 0
        while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(data: chunk)
            try output.write(contentsOf: chunk)
            total += chunk.count
        }
        try output.synchronize()
        return (total, hasher.finalize().map { String(format: "%02x", $0) }.joined())
    }
}

extension UpdatePlan {
    /// This plan, when the manifest and the database are still as it was made from.
    /// A plan made before another process brought the database to the newest is carried out as
    /// the up-to-date plan it is now.
    func confirmed(against now: UpdatePlan) throws -> UpdatePlan {
        if now.method == .upToDate && now.to == to { return now }
        guard manifestSHA256 == now.manifestSHA256 else { throw StationClientError.planOutdated(reason: "the manifest changed since") }
        guard from == now.from else { throw StationClientError.planOutdated(reason: "the database is at version \(now.from), the plan starts at \(from)") }
        // The same manifest and version give the same plan: this one is it, or it with the full download preferred.
        return self
    }
}
