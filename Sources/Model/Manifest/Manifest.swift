import Foundation

/// `manifest.json` of a release folder: every built version, its database and its deltas.
///
/// Paths are relative to the folder. `contentHash` (see `ContentHash`) lets a client
/// or a test check a database after applying a delta, whatever its bytes.
public struct Manifest: Codable, Sendable, Equatable {
    /// The manifest's name at the top of a release folder.
    public static let fileName = "manifest.json"
    /// 2: with `lineage` and `downloads`; no delta from version 0, none larger than the database.
    /// 3: each version has a carry-over script, and each full download names it.
    /// 4: a delta may be joined from an older version's delta and one of its own (`via`).
    /// 5: a joined delta lists the hash of each part's SQL (`sql_parts`), not of the whole.
    /// 6: each version lists every station split through it (`splits`).
    /// 7: each version lists the columns its content hash covers (`content_columns`).
    public var format = Manifest.currentFormat
    /// The format this code writes.
    public static let currentFormat = 7
    /// The lineage id of the master database whose releases these are (see `MasterStamp`);
    /// nil in a folder made before lineages existed.
    public var lineage: String?
    /// The newest version built in this folder.
    public var newest: Int
    /// What signing adds, inside the signed bytes (`ManifestSigning`); nil in an unsigned folder.
    /// The dataset a phone pins: the lineage.
    public var dataset: String?
    /// Grows by one with every signing of this folder: a phone refuses a lower one (rollback).
    public var sequence: Int?
    /// When this manifest was signed, UTC (`2026-11-27T03:10:00Z`).
    public var publishedAt: String?
    /// After this instant, UTC, a phone refuses the manifest (a frozen mirror) until it is renewed.
    public var expires: String?
    /// Every version built in this folder, oldest first.
    public var versions: [ReleasedVersion]

    /// A manifest of the current format.
    public init(lineage: String?, newest: Int, versions: [ReleasedVersion]) {
        self.lineage = lineage
        self.newest = newest
        self.versions = versions
    }

    /// The built version `number`, if this folder has it.
    public func version(_ number: Int) -> ReleasedVersion? { versions.first { $0.version == number } }

    // The keys are spelled snake_case by each type's `CodingKeys`, not converted by a key
    // strategy, which would convert every key of every version again on each coding.
    package func encoded() throws -> Data {
        try Self.encoder().encode(self) + Data("\n".utf8)
    }

    package static func decode(_ data: Data) throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: data)
    }

    /// `encoded()`'s bytes when this manifest is `previous.manifest` with one newer version
    /// appended, made from `previous.bytes` and the new version's encoding alone; `encoded()`
    /// otherwise. Every release adds a version listing every older one, so the whole encoding
    /// grows with the square of the versions, on one core at the release's end; this way only the
    /// new version is encoded.
    ///
    /// `encoded()` writes the versions one after the other inside the top-level object, each
    /// nested two levels deep: `head` (the manifest without versions, up to `"versions" : [`),
    /// a newline, each version's own encoding indented by four spaces (its empty lines left
    /// empty), separated by `,\n`, then `arrayEnd`. The older versions' text is taken from the
    /// bytes they were decoded from; a head or an end not as `encoded()` writes them falls back
    /// to encoding it all.
    package func encoded(extending previous: ManifestFile) throws -> Data {
        let older = previous.manifest
        guard format == Self.currentFormat, older.format == format, let added = versions.last,
              let newestOlder = older.versions.last, newestOlder.version < added.version,
              versions.count == older.versions.count + 1, versions.dropLast().elementsEqual(older.versions) else {
            return try encoded()
        }
        let bytes = previous.bytes
        guard let olderHead = try older.head(), let head = try head(),
              bytes.count > olderHead.count + Self.arrayEnd.count, bytes.starts(with: olderHead + Data("\n".utf8)),
              bytes.suffix(Self.arrayEnd.count).elementsEqual(Self.arrayEnd) else {
            return try encoded()
        }
        let entry = try Self.encoder().encode(added)
        var spliced = head
        spliced.reserveCapacity(bytes.count + entry.count * 5 / 4)
        spliced.append(bytes[(bytes.startIndex + olderHead.count)..<(bytes.endIndex - Self.arrayEnd.count)])
        spliced.append(contentsOf: ",".utf8)
        // A string holds no raw newline (JSON escapes it), so each newline starts a line: each is
        // indented but the empty line inside an empty array or object.
        for line in entry.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            spliced.append(contentsOf: line.isEmpty ? "\n".utf8 : "\n    ".utf8)
            spliced.append(contentsOf: line)
        }
        spliced.append(Self.arrayEnd)
        return spliced
    }

    /// What `encoded()` writes after the last version.
    private static let arrayEnd = Data("\n  ]\n}\n".utf8)
    /// What `encoded()` writes for an empty `versions` and after it.
    private static let emptyArrayEnd = Data("\n\n  ]\n}\n".utf8)

    /// The encoding of this manifest up to `"versions" : [`; nil if an empty array's end is
    /// not what this type expects of `JSONEncoder`.
    private func head() throws -> Data? {
        var empty = self
        empty.versions = []
        let whole = try empty.encoded()
        guard whole.suffix(Self.emptyArrayEnd.count).elementsEqual(Self.emptyArrayEnd) else { return nil }
        return whole.prefix(whole.count - Self.emptyArrayEnd.count)
    }

    private enum CodingKeys: String, CodingKey {
        case format, lineage, newest, versions, dataset, sequence, publishedAt = "published_at", expires
    }

    /// One version's entry as this type encodes it (keys sorted, compact): what a master records
    /// of what it published.
    package static func encodedEntry(_ version: ReleasedVersion) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(version)
    }

    private static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

/// A manifest as read from its file, with the bytes it was decoded from: the next release
/// writes its manifest from them (`Manifest.encoded(extending:)`).
package struct ManifestFile: Sendable {
    package let manifest: Manifest
    package let bytes: Data

    package init(manifest: Manifest, bytes: Data) {
        self.manifest = manifest
        self.bytes = bytes
    }
}

/// A file of a release folder as the manifest lists it: where, how large, its SHA-256.
public struct ReleasedFile: Codable, Sendable, Equatable {
    /// Relative to the release folder.
    public var path: String
    /// Its size in bytes.
    public var bytes: Int
    /// SHA-256 of its bytes (hex).
    public var sha256: String

    package init(path: String, bytes: Int, sha256: String) {
        self.path = path
        self.bytes = bytes
        self.sha256 = sha256
    }
}

/// One built version: its client database, plain and gzip, its deltas and what each older
/// phone downloads.
public struct ReleasedVersion: Codable, Sendable, Equatable {
    /// The data version (`PRAGMA user_version` of its database).
    public var version: Int
    /// The client database (`N/stations.sqlite`), bundled with the app.
    public var database: ReleasedFile
    /// The same, gzipped: a full download.
    public var databaseGzip: ReleasedFile
    /// Rows per client table, closed ones included.
    public var rows: [String: Int]
    /// The content hash of its tables (`ContentHash`): a phone that applied a delta has the same.
    public var contentHash: String
    /// The deltas written: only those a client can use (see `downloads`).
    public var deltas: [ReleasedDelta]
    /// The SQL that carries a phone's user records into this version's database after a full
    /// download or an app update (`CarryOverScript`); nil in folders of format 2 or older.
    public var carryOver: ReleasedFile?
    /// What a client at each older version (1 to version − 1) downloads: its delta, or the
    /// full database when the delta's gzip would be larger. A client at version 0 (a new
    /// install) or at a version not listed downloads the full database.
    public var downloads: [ClientDownload]
    /// The client schema of the database and of every delta's end (`ClientSchemaChange`);
    /// 1 in folders written before it was recorded.
    public var clientSchema: Int
    /// Every station split recorded up to this version, in the order recorded, so that a
    /// consumer (an app's own tables, the web service's users) applies those after its own
    /// version without reading SQL; nil in folders of format 5 or older.
    public var splits: [StationSplit]?
    /// The columns `contentHash` covers, per table (`ReleaseContent.hashedTables`), in the order
    /// hashed: the client schema's. A phone hashes these and no others, so a column an app added
    /// to a release table is not the release's content; nil in folders of format 6 or older.
    public var contentColumns: [String: [String]]?

    /// A built version as a release records it.
    public init(version: Int, database: ReleasedFile, databaseGzip: ReleasedFile, rows: [String: Int],
                contentHash: String, deltas: [ReleasedDelta], carryOver: ReleasedFile?, downloads: [ClientDownload], clientSchema: Int,
                splits: [StationSplit]?, contentColumns: [String: [String]]? = nil) {
        self.version = version
        self.database = database
        self.databaseGzip = databaseGzip
        self.rows = rows
        self.contentHash = contentHash
        self.deltas = deltas
        self.carryOver = carryOver
        self.downloads = downloads
        self.clientSchema = clientSchema
        self.splits = splits
        self.contentColumns = contentColumns
    }

    private enum CodingKeys: String, CodingKey {
        case version, database, databaseGzip = "database_gzip", rows, contentHash = "content_hash", deltas
        case carryOver = "carry_over", downloads, clientSchema = "client_schema", splits, contentColumns = "content_columns"
    }

    /// Manifests of format 1 have no `downloads`: each delta was its version's download.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        database = try container.decode(ReleasedFile.self, forKey: .database)
        databaseGzip = try container.decode(ReleasedFile.self, forKey: .databaseGzip)
        rows = try container.decode([String: Int].self, forKey: .rows)
        contentHash = try container.decode(String.self, forKey: .contentHash)
        deltas = try container.decode([ReleasedDelta].self, forKey: .deltas)
        carryOver = try container.decodeIfPresent(ReleasedFile.self, forKey: .carryOver)
        downloads = try container.decodeIfPresent([ClientDownload].self, forKey: .downloads)
            ?? deltas.map { ClientDownload(from: $0.from, kind: .delta, path: $0.file.path) }
        clientSchema = try container.decodeIfPresent(Int.self, forKey: .clientSchema) ?? 1
        splits = try container.decodeIfPresent([StationSplit].self, forKey: .splits)
        contentColumns = try container.decodeIfPresent([String: [String]].self, forKey: .contentColumns)
    }
}

/// What a client at data version `from` downloads to reach a release, and for a full download
/// what it runs after (`{"from": 1, "kind": "full", "path": "4/stations.sqlite.gz", "carry_over": "4/carry-over.sql"}`).
public struct ClientDownload: Codable, Sendable, Equatable {
    /// A delta to apply, or the full database to download.
    public enum Kind: String, Codable, Sendable {
        case delta
        case full
    }
    /// The data version the phone is at.
    public var from: Int
    /// Whether it downloads a delta or the full database.
    public var kind: Kind
    /// The file, relative to the release folder.
    public var path: String
    /// For a full download: the carry-over script, relative to the release folder; nil for a
    /// delta (which carries the splits itself) and in folders of format 2 or older.
    public var carryOver: String?

    /// What a phone at `from` downloads.
    public init(from: Int, kind: Kind, path: String, carryOver: String? = nil) {
        self.from = from
        self.kind = kind
        self.path = path
        self.carryOver = carryOver
    }

    private enum CodingKeys: String, CodingKey { case from, kind, path, carryOver = "carry_over" }

    /// Every key present, `null` for no carry-over (docs/json.md).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(from, forKey: .from)
        try container.encode(kind, forKey: .kind)
        try container.encode(path, forKey: .path)
        try container.encode(carryOver, forKey: .carryOver)
    }
}

/// A delta of a release: from an older version to this one, gzipped.
public struct ReleasedDelta: Codable, Sendable, Equatable {
    /// The data version the phone is at.
    public var from: Int
    /// The version it reaches: the release's.
    public var to: Int
    /// The gzip file a client downloads.
    public var file: ReleasedFile
    /// The size of the SQL once inflated.
    public var sqlBytes: Int
    /// SHA-256 of the SQL once inflated (hex); nil for a delta joined by a release of format 5
    /// or later, whose `sqlParts` are hashed each.
    public var sqlSha256: String?
    /// For a delta joined by a release of format 5 or later: its SQL as the deltas rendered from
    /// the master that it joins, oldest first, each with its size and hash; nil otherwise.
    /// Hashing each part lets a release join a file without inflating and hashing all of it.
    public var sqlParts: [DeltaSQLPart]?
    /// Statements per table and kind (`INSERT OR REPLACE`, `UPDATE`, `DELETE`).
    public var statements: [String: [String: Int]]
    /// Splits the delta carries out on the phone.
    public var duplicates: Int
    /// nil for a delta rendered from the master. Else the version through which it was joined
    /// (`DeltaChainPlan`): the file is version `via`'s delta from `from`, then this version's
    /// delta from `via`, as one gzip member; its SQL is theirs one after the other, and so are
    /// its statements and splits.
    public var via: Int?

    /// A delta as a release records it.
    public init(from: Int, to: Int, file: ReleasedFile, sqlBytes: Int, sqlSha256: String?, sqlParts: [DeltaSQLPart]? = nil,
                statements: [String: [String: Int]], duplicates: Int, via: Int?) {
        self.from = from
        self.to = to
        self.file = file
        self.sqlBytes = sqlBytes
        self.sqlSha256 = sqlSha256
        self.sqlParts = sqlParts
        self.statements = statements
        self.duplicates = duplicates
        self.via = via
    }

    /// What a reader of the SQL checks, in order: the parts of a joined delta, or the whole SQL
    /// as one part; nil for an entry with neither (which `ManifestAudit` names).
    public var hashedSQLParts: [DeltaSQLPart]? {
        sqlParts ?? sqlSha256.map { [DeltaSQLPart(sqlBytes: sqlBytes, sqlSha256: $0)] }
    }

    private enum CodingKeys: String, CodingKey {
        case from, to, file, sqlBytes = "sql_bytes", sqlSha256 = "sql_sha256", sqlParts = "sql_parts", statements, duplicates, via
    }

    /// Every key present: `null` for what a delta lacks (a rendered one's `via` and `sql_parts`,
    /// a joined one's `sql_sha256`; docs/json.md).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(from, forKey: .from)
        try container.encode(to, forKey: .to)
        try container.encode(file, forKey: .file)
        try container.encode(sqlBytes, forKey: .sqlBytes)
        try container.encode(sqlSha256, forKey: .sqlSha256)
        try container.encode(sqlParts, forKey: .sqlParts)
        try container.encode(statements, forKey: .statements)
        try container.encode(duplicates, forKey: .duplicates)
        try container.encode(via, forKey: .via)
    }
}

/// A stretch of a joined delta's SQL: the SQL of one delta rendered from the master.
public struct DeltaSQLPart: Codable, Sendable, Equatable {
    /// Its size in bytes.
    public var sqlBytes: Int
    /// SHA-256 of its bytes (hex).
    public var sqlSha256: String

    /// A part of `sqlBytes` bytes whose SHA-256 is `sqlSha256`.
    public init(sqlBytes: Int, sqlSha256: String) {
        self.sqlBytes = sqlBytes
        self.sqlSha256 = sqlSha256
    }

    private enum CodingKeys: String, CodingKey { case sqlBytes = "sql_bytes", sqlSha256 = "sql_sha256" }
}
