import Foundation
import StationSignatures

/// What a phone reads of `manifest.json`: the newest version and, for it, the files each older
/// version downloads, with their sizes and SHA-256. The curator's side writes the manifest
/// (`Manifest` in StationManifest); an app reads only this much, and ignores what it does not know.
public struct ReleaseIndex: Decodable, Sendable {
    /// A file as the manifest lists it.
    public struct File: Decodable, Sendable, Equatable {
        /// Relative to the release folder.
        public let path: String
        /// Its size in bytes.
        public let bytes: Int
        /// SHA-256 of its bytes (hex).
        public let sha256: String
    }

    /// One part of a delta's SQL, hashed on its own (a delta joined from two).
    public struct SQLPart: Decodable, Sendable, Equatable {
        /// The part's size, in bytes of SQL.
        public let sqlBytes: Int
        /// SHA-256 of the part's SQL (hex).
        public let sqlSha256: String
        enum CodingKeys: String, CodingKey { case sqlBytes = "sql_bytes", sqlSha256 = "sql_sha256" }
    }

    /// The delta from one older version.
    public struct Delta: Decodable, Sendable {
        /// The version a phone must be at.
        public let from: Int
        /// The gzip file.
        public let file: File
        /// The size of its SQL once inflated.
        public let sqlBytes: Int
        /// SHA-256 of the inflated SQL (a rendered delta); nil for a joined one.
        public let sqlSha256: String?
        /// The hashes of a joined delta's parts, in order; nil for a rendered one.
        public let sqlParts: [SQLPart]?
        enum CodingKeys: String, CodingKey { case from, file, sqlBytes = "sql_bytes", sqlSha256 = "sql_sha256", sqlParts = "sql_parts" }

        /// The parts whose hashes the inflated SQL must match, one after the other.
        var parts: [SQLPart] { sqlParts ?? sqlSha256.map { [SQLPart(sqlBytes: sqlBytes, sqlSha256: $0)] } ?? [] }

        /// The SQL of the downloaded `gzip`, inflated within the signed size and checked part by
        /// part against the signed hashes: what a phone and the web service run.
        ///
        /// - Throws: `StationClientError.hashDiffers` or `.sizeDiffers`; a gzip that does not
        ///   inflate within the signed size is removed (signed, and useless: never tried again).
        func verifiedSQL(inflating gzip: String) throws -> Data {
            let text: Data
            do {
                text = try GzipFile.inflate(gzip, limit: sqlBytes, name: file.path)
            } catch let error as StationClientError where error.category == .untrusted {
                try? FileManager.default.removeItem(atPath: gzip)
                throw error
            }
            var offset = 0
            for part in parts {
                guard offset + part.sqlBytes <= text.count,
                      ManifestSignatures.sha256(text[offset..<(offset + part.sqlBytes)]) == part.sqlSha256 else {
                    throw StationClientError.hashDiffers(path: file.path + " (its SQL)")
                }
                offset += part.sqlBytes
            }
            guard text.count == sqlBytes, offset == text.count else {
                throw StationClientError.sizeDiffers(path: file.path + " (its SQL)", actual: text.count, expected: sqlBytes)
            }
            return text
        }
    }

    /// What a phone at `from` downloads.
    public struct Download: Decodable, Sendable {
        /// The version a phone is at.
        public let from: Int
        /// `delta` or `full`.
        public let kind: String
        /// The file it downloads.
        public let path: String
        /// For a full download: the carry-over script it runs after.
        public let carryOver: String?
        enum CodingKeys: String, CodingKey { case from, kind, path, carryOver = "carry_over" }
    }

    /// One released version.
    public struct Version: Decodable, Sendable {
        /// The data version.
        public let version: Int
        /// The client database, bundled with the app.
        public let database: File
        /// The same, gzipped: a full download.
        public let databaseGzip: File
        /// The script that carries a phone's records into the database; nil in folders of format 2 or older.
        public let carryOver: File?
        /// The deltas from older versions.
        public let deltas: [Delta]
        /// What a phone at each older version downloads.
        public let downloads: [Download]
        /// Every station split through this version (manifest format 6 on); nil in older folders.
        public let splits: [ReleaseSplit]?
        enum CodingKeys: String, CodingKey {
            case version, database, databaseGzip = "database_gzip", carryOver = "carry_over", deltas, downloads, splits
        }

        /// The splits after data version `version`, in the order recorded; refused when the
        /// manifest does not list them (format 5 or older), since a hook told "no splits" when
        /// there were some would lose the app's own credit.
        func splits(after version: Int, manifest: String = "manifest.json") throws -> [ReleaseSplit] {
            guard let splits else {
                throw StationClientError.badManifest(path: manifest, reason: "version \(self.version) lists no station splits (a manifest of format 5 or older); the release must be published again")
            }
            return splits.filter { $0.version > version }
        }
    }

    /// The newest version of the folder.
    public let newest: Int
    /// Every version built in the folder, oldest first.
    public let versions: [Version]

    /// The manifest's bytes, decoded.
    public static func decode(_ data: Data) throws -> ReleaseIndex {
        do {
            return try JSONDecoder().decode(ReleaseIndex.self, from: data)
        } catch {
            throw StationClientError.badManifest(path: "manifest.json", reason: "\(error)")
        }
    }

    /// The newest version's entry.
    var newestVersion: Version? { versions.first { $0.version == newest } }

    /// Version `number`'s entry.
    func version(_ number: Int) -> Version? { versions.first { $0.version == number } }
}

/// A station split as a release lists it: every user record of `old` is copied to `new`, at
/// data version `version`. An app moves its own tables' rows across it in its update hook.
public struct ReleaseSplit: Decodable, Sendable, Equatable, Hashable {
    /// The station whose records are copied.
    public let old: Int64
    /// The station that receives them.
    public let new: Int64
    /// The data version that recorded the split.
    public let version: Int

    /// A split of `old` into `new` at `version`.
    public init(old: Int64, new: Int64, version: Int) {
        self.old = old
        self.new = new
        self.version = version
    }
}
