import Foundation
import GRDB

/// How `release` runs.
public struct ReleaseOptions: Sendable {
    public var outputFolder: String
    /// nil: the newest version.
    public var version: Int?
    public var verify: Bool

    public init(outputFolder: String = "release", version: Int? = nil, verify: Bool = true) {
        self.outputFolder = outputFolder
        self.version = version
        self.verify = verify
    }
}

public struct ReleaseResult: Sendable {
    public var released: ReleasedVersion
    public var manifest: Manifest
    public var verification: VerificationReport?
}

extension MasterDatabase {
    /// Builds the client database of a version and a delta from every older version,
    /// verifies them, and adds them to the release folder.
    ///
    /// Everything is built in a temporary folder inside the release folder, then renamed
    /// into place, and the manifest is replaced last (also by a rename): an interrupted
    /// release leaves the folder as it was, never a manifest naming missing files.
    ///
    /// - Throws: `ReleaseError` (no such version, a corrupt or disagreeing folder, a failed
    ///   verification); the folder is unchanged then.
    @discardableResult
    public func release(_ options: ReleaseOptions = ReleaseOptions()) throws -> ReleaseResult {
        let folder = ReleaseFolder(path: options.outputFolder)
        let existing = try folder.loadManifestIfPresent()
        let newest = try dataVersion()
        let version = options.version ?? newest
        guard (0...newest).contains(version) else { throw ReleaseError.noSuchVersion(requested: version, newest: newest) }

        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        let building = ReleaseFolder(path: folder.url(".building-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"))
        defer { try? FileManager.default.removeItem(atPath: building.path) }
        try FileManager.default.createDirectory(atPath: building.url("\(version)"), withIntermediateDirectories: true)

        let released = try build(version: version, newest: newest, into: building)
        var verification: VerificationReport?
        if options.verify {
            let verifier = ReleaseVerifier(folder: building, master: self, scratch: building.url("verify"))
            verification = try verifier.verify(released, olderDatabases: existing.map { (folder, $0) })
            if !verification!.failures.isEmpty { throw ReleaseError.verificationFailed(verification!.failures) }
        }

        let target = folder.url("\(version)")
        let displaced = building.url("displaced")
        if FileManager.default.fileExists(atPath: target) { try AtomicFile.moveIntoPlace(target, displaced, replacing: false) }
        try AtomicFile.moveIntoPlace(building.url("\(version)"), target, replacing: false)
        var manifest = existing ?? Manifest(newest: version, versions: [])
        manifest.versions.removeAll { $0.version == version }
        manifest.versions.append(released)
        manifest.versions.sort { $0.version < $1.version }
        manifest.newest = manifest.versions.last!.version
        try AtomicFile.write(try manifest.encoded(), to: folder.manifestPath)
        return ReleaseResult(released: released, manifest: manifest, verification: verification)
    }

    private func build(version: Int, newest: Int, into building: ReleaseFolder) throws -> ReleasedVersion {
        var phases = PhaseLog()
        let databasePath = "\(version)/stations.sqlite"
        let built = try ReleaseDatabaseBuilder(masterPath: path).build(version: version, newest: newest, at: building.url(databasePath), hashing: false)
        // The database is hashed and gzipped on a second core while its content hash
        // and the deltas are computed on this one.
        let compression = BackgroundTask {
            (sha256: try FileDigest.sha256(ofFile: building.url(databasePath)),
             gzip: try Gunzip.compress(file: building.url(databasePath), to: building.url(databasePath + ".gz")))
        }
        let contentHash = try ContentHash.compute(ofFile: building.url(databasePath))
        phases.done("content hash")
        var written: [(from: Int, path: String, delta: WrittenDelta)] = []
        for from in 0..<version {
            let deltaPath = "\(version)/delta-from-\(from).sql.gz"
            written.append((from, deltaPath, try writeDelta(from: from, to: version, gzip: true, output: building.url(deltaPath))))
        }
        phases.done("deltas")
        let (databaseSha256, gzipped) = try compression.wait()
        phases.done("database sha256 and gzip (after the deltas)")
        let database = ReleasedFile(path: databasePath, bytes: try Self.size(building.url(databasePath)), sha256: databaseSha256)
        let databaseGzip = ReleasedFile(path: databasePath + ".gz", bytes: gzipped.bytes, sha256: gzipped.sha256)
        let deltas = written.map { from, deltaPath, delta in
            ReleasedDelta(
                from: from, to: version,
                file: ReleasedFile(path: deltaPath, bytes: delta.gzipBytes, sha256: delta.gzipSha256),
                sqlBytes: delta.sqlBytes, sqlSha256: delta.sqlSha256,
                statements: delta.summary.statements, duplicates: delta.summary.duplicates,
                fullDownloadIsSmaller: delta.gzipBytes > databaseGzip.bytes)
        }
        return ReleasedVersion(
            version: version, database: database, databaseGzip: databaseGzip,
            rows: built.rows, contentHash: contentHash, deltas: deltas)
    }

    static func size(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Builds the client database of any version, for `verify` and for tests.
    public func buildClientDatabase(version: Int, at path: String) throws -> BuiltDatabase {
        let newest = try dataVersion()
        guard (0...newest).contains(version) else { throw ReleaseError.noSuchVersion(requested: version, newest: newest) }
        return try ReleaseDatabaseBuilder(masterPath: self.path).build(version: version, newest: newest, at: path)
    }
}
