import Foundation
import GRDB

/// A delta as written: its statements and the size and hash of its SQL and of its gzip.
public struct WrittenDelta: Sendable {
    public var summary: DeltaSummary
    public var sqlBytes: Int
    public var sqlSha256: String
    public var gzipBytes: Int
    public var gzipSha256: String
}

extension MasterDatabase {
    /// Writes the delta from `from` to `to` (default: the newest version) into `output`
    /// (nil: standard output), gzipped or not, and measures both forms.
    ///
    /// It reads one state of the master (a read transaction) and writes nothing to it.
    /// A file is written under a temporary name and renamed when complete.
    ///
    /// - Throws: `ReleaseError.noSuchVersion` for a negative or too new version.
    public func writeDelta(from: Int, to: Int? = nil, gzip: Bool = false, transaction: Bool = false, output: String? = nil) throws -> WrittenDelta {
        try readingOneState { db in
            let newest = try Self.dataVersion(db)
            return try Self.writeDelta(db, from: from, to: to ?? newest, newest: newest, gzip: gzip, transaction: transaction, output: output)
        }
    }

    /// Writes a delta inside the caller's read transaction (a release writes all of its own
    /// deltas from the one state it builds the client database from).
    static func writeDelta(_ db: Database, from: Int, to: Int, newest: Int, gzip: Bool, transaction: Bool, output: String?) throws -> WrittenDelta {
        for version in [from, to] where version < 0 || version > newest {
            throw ReleaseError.noSuchVersion(requested: version, newest: newest)
        }
        if from > to { throw ReleaseError.fromNewerThanTo(from: from, to: to) }
        let temporary = output.map(AtomicFile.temporaryPath(for:))
        do {
            let destination: ByteSink = try temporary.map { try FileSink(path: $0) } ?? FileSink.standardOutput()
            let gzipDigest = DigestSink(next: gzip ? destination : nil)
            // Deflate runs on a second core while SQLite renders the statements.
            let compressor = BackgroundSink(next: try GzipSink(next: gzipDigest))
            let sqlDigest = DigestSink(next: TeeSink([compressor] + (gzip ? [] : [destination])))
            let summary = try DeltaWriter(from: from, to: to, newest: newest, transaction: transaction).write(db, into: sqlDigest)
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
