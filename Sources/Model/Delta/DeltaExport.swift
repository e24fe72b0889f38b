import Foundation
import GRDB
import StationSchema
import StationSupport

/// Writes the SQL a client at one data version runs to reach a newer one, from a master.
///
/// A capability over the thin `MasterDatabase` handle, as GRDB's `DatabaseMigrator` takes a
/// writer: `try DeltaExport(master).…`.
public struct DeltaExport: Sendable {
    /// The master it reads.
    public let master: MasterDatabase

    /// The deltas of `master`.
    public init(_ master: MasterDatabase) {
        self.master = master
    }
}

/// A delta as written: its statements and the size and hash of its SQL and of its gzip.
public struct WrittenDelta: Sendable, Encodable {
    /// What the delta does: statements per table and kind, splits.
    public var summary: DeltaSummary
    /// Bytes of the SQL.
    public var sqlBytes: Int
    /// SHA-256 of the SQL (hex).
    public var sqlSha256: String
    /// Bytes of the gzip file (0 when not gzipped).
    public var gzipBytes: Int
    /// SHA-256 of the gzip file (hex; empty when not gzipped).
    public var gzipSha256: String

    private enum CodingKeys: String, CodingKey {
        case from, to, statements, duplicates, totalStatements = "total_statements"
        case sqlBytes = "sql_bytes", sqlSha256 = "sql_sha256", gzipBytes = "gzip_bytes", gzipSha256 = "gzip_sha256"
    }

    /// `delta --json`: flat, snake_case (docs/json.md).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(summary.from, forKey: .from)
        try container.encode(summary.to, forKey: .to)
        try container.encode(summary.everyStatementCount, forKey: .statements)
        try container.encode(summary.duplicates, forKey: .duplicates)
        try container.encode(summary.totalStatements, forKey: .totalStatements)
        try container.encode(sqlBytes, forKey: .sqlBytes)
        try container.encode(sqlSha256, forKey: .sqlSha256)
        try container.encode(gzipBytes, forKey: .gzipBytes)
        try container.encode(gzipSha256, forKey: .gzipSha256)
    }
}

/// Where a delta goes: a file (written under a temporary name and renamed when complete),
/// or a stream the caller owns (the command line hands in standard output).
public enum DeltaDestination {
    case file(String)
    case stream(ByteSink)
}

extension DeltaExport {
    /// Writes the delta from `from` to `to` (default: the newest version) into `destination`,
    /// gzipped or not, and measures both forms.
    ///
    /// It reads one state of the master (a read transaction) and writes nothing to it.
    /// A file is written under a temporary name and renamed when complete.
    ///
    /// - Throws: `NoSuchVersion` for a negative or too new version.
    public func writeDelta(from: Int, to: Int? = nil, gzip: Bool = false, transaction: Bool = false, into destination: DeltaDestination) throws -> WrittenDelta {
        try master.readingOneState { db in
            let newest = try MasterDatabase.dataVersion(db)
            let to = to ?? newest
            try DeltaWriter.checkVersions(from: from, to: to, newest: newest)
            let writer = try DeltaWriter.prepare(db, master.declared, froms: [from], to: to, newest: newest)
            defer { try? writer.finish(db) }
            return try writer.write(db, from: from, gzip: gzip, transaction: transaction, into: destination)
        }
    }
}

extension DeltaWriter {
    /// - Throws: `NoSuchVersion` for a version outside 0 to `newest`; `DeltaError` for `from` newer than `to`.
    package static func checkVersions(from: Int, to: Int, newest: Int) throws {
        for version in [from, to] { try NoSuchVersion.require(version, newest: newest, lowest: 0) }
        if from > to { throw DeltaError.fromNewerThanTo(from: from, to: to) }
    }

    /// Writes a delta inside the caller's read transaction, from the statements this writer
    /// rendered (a release writes all of its own deltas from the one state it builds the client
    /// database from) into a file (under a temporary name, renamed when complete) or a stream,
    /// gzipped or not, measuring both forms.
    package func write(_ db: Database, from: Int, gzip: Bool, transaction: Bool, into destination: DeltaDestination) throws -> WrittenDelta {
        var output: String?
        if case .file(let path) = destination {
            try FileChecks.requireReplaceable(path)
            output = path
        }
        let temporary = output.map(AtomicFile.temporaryPath(for:))
        do {
            let sink: ByteSink
            switch destination {
            case .file:
                do {
                    sink = try FileSink(path: temporary!)
                } catch let error as FileError {
                    // The temporary name means nothing to the curator: name the file asked for.
                    throw FileError(cannot: "write \(output!)", code: error.code, hint: "choose another --output")
                }
            case .stream(let stream): sink = stream
            }
            let gzipDigest = DigestSink(next: gzip ? sink : nil)
            // Deflate runs on a second core while SQLite renders the statements.
            let compressor = BackgroundSink(next: try GzipSink(next: gzipDigest))
            let sqlDigest = DigestSink(next: gzip ? compressor : TeeSink([compressor, sink]))
            let summary = try write(from: from, transaction: transaction, db, into: sqlDigest)
            try sqlDigest.finish()
            if let temporary, let output { try AtomicFile.moveIntoPlace(temporary, output, replacing: true) }
            return WrittenDelta(
                summary: summary, sqlBytes: sqlDigest.byteCount, sqlSha256: sqlDigest.sha256,
                gzipBytes: gzipDigest.byteCount, gzipSha256: gzipDigest.sha256)
        } catch {
            if let temporary { try? FileManager.default.removeItem(atPath: temporary) }
            throw error
        }
    }
}
