import Foundation

/// `manifest.json` of a release folder: every built version, its database and its deltas.
///
/// Paths are relative to the folder. `contentHash` (see `ContentHash`) lets a client
/// or a test check a database after applying a delta, whatever its bytes.
public struct Manifest: Codable, Sendable, Equatable {
    public static let fileName = "manifest.json"
    /// 2: with `lineage`.
    public var format = 2
    /// The lineage id of the master database whose releases these are (see `MasterStamp`);
    /// nil in a folder made before lineages existed.
    public var lineage: String?
    /// The newest version built in this folder.
    public var newest: Int
    public var versions: [ReleasedVersion]

    public init(lineage: String?, newest: Int, versions: [ReleasedVersion]) {
        self.lineage = lineage
        self.newest = newest
        self.versions = versions
    }

    public func version(_ number: Int) -> ReleasedVersion? { versions.first { $0.version == number } }

    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return try encoder.encode(self) + Data("\n".utf8)
    }

    static func decode(_ data: Data) throws -> Manifest {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(Manifest.self, from: data)
    }
}

public struct ReleasedFile: Codable, Sendable, Equatable {
    public var path: String
    public var bytes: Int
    public var sha256: String
}

public struct ReleasedVersion: Codable, Sendable, Equatable {
    public var version: Int
    public var database: ReleasedFile
    public var databaseGzip: ReleasedFile
    public var rows: [String: Int]
    public var contentHash: String
    public var deltas: [ReleasedDelta]
}

public struct ReleasedDelta: Codable, Sendable, Equatable {
    public var from: Int
    public var to: Int
    /// The gzip file a client downloads.
    public var file: ReleasedFile
    /// Size and hash of the SQL once inflated.
    public var sqlBytes: Int
    public var sqlSha256: String
    public var statements: [String: [String: Int]]
    public var duplicates: Int
    /// The delta's gzip is larger than the whole database's: download the database instead.
    public var fullDownloadIsSmaller: Bool
}
