import Foundation

/// What a phone reads of `manifest.json`: the newest version and, for it, the files each older
/// version downloads, with their sizes and SHA-256. The curator's side writes the manifest
/// (`Manifest` in StationRelease); an app reads only this much, and ignores what it does not know.
public struct ReleaseIndex: Decodable, Sendable {
    /// A file as the manifest lists it.
    public struct File: Decodable, Sendable, Equatable {
        public let path: String
        public let bytes: Int
        public let sha256: String
    }

    /// One part of a delta's SQL, hashed on its own (a delta joined from two).
    public struct SQLPart: Decodable, Sendable, Equatable {
        public let sqlBytes: Int
        public let sqlSha256: String
        enum CodingKeys: String, CodingKey { case sqlBytes = "sql_bytes", sqlSha256 = "sql_sha256" }
    }

    /// The delta from one older version.
    public struct Delta: Decodable, Sendable {
        public let from: Int
        public let file: File
        public let sqlBytes: Int
        public let sqlSha256: String?
        public let sqlParts: [SQLPart]?
        enum CodingKeys: String, CodingKey { case from, file, sqlBytes = "sql_bytes", sqlSha256 = "sql_sha256", sqlParts = "sql_parts" }

        /// The parts whose hashes the inflated SQL must match, one after the other.
        var parts: [SQLPart] { sqlParts ?? sqlSha256.map { [SQLPart(sqlBytes: sqlBytes, sqlSha256: $0)] } ?? [] }
    }

    /// What a phone at `from` downloads.
    public struct Download: Decodable, Sendable {
        public let from: Int
        public let kind: String
        public let path: String
        public let carryOver: String?
        enum CodingKeys: String, CodingKey { case from, kind, path, carryOver = "carry_over" }
    }

    /// One released version.
    public struct Version: Decodable, Sendable {
        public let version: Int
        public let database: File
        public let databaseGzip: File
        public let carryOver: File?
        public let deltas: [Delta]
        public let downloads: [Download]
        enum CodingKeys: String, CodingKey {
            case version, database, databaseGzip = "database_gzip", carryOver = "carry_over", deltas, downloads
        }
    }

    public let newest: Int
    public let versions: [Version]

    /// The manifest's bytes, decoded.
    public static func decode(_ data: Data) throws -> ReleaseIndex {
        do {
            return try JSONDecoder().decode(ReleaseIndex.self, from: data)
        } catch {
            throw StationClientError.badManifest("\(error)")
        }
    }

    /// The newest version's entry.
    var newestVersion: Version? { versions.first { $0.version == newest } }
}
