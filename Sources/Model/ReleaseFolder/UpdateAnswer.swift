import Foundation
import StationManifest
import StationSupport

/// What a release folder answers a phone that asks for the newest data with its `user_version`
/// (`GET /update?from=V`, the original service's one request): decided from the manifest
/// alone, so that `serve`, nginx and a CDN give the same answer.
///
/// For example, with release 4 publishing deltas from 1 and 2 and a full download for 3:
/// `from=2` → `.delta(4/delta-from-2.sql.gz)`, `from=3` or `from=0` → `.full(4/stations.sqlite.gz,
/// then 4/carry-over.sql)`, `from=4` → `.upToDate(4)`, `from=x`, `from=-1` or `from=9` → `.refused`.
public enum UpdateAnswer: Sendable, Equatable {
    /// The gzip SQL that brings the phone to `to`.
    case delta(ReleasedFile, to: Int)
    /// The gzip database of `to`, and the script the phone runs after it (nil in a folder made
    /// before carry-over scripts).
    case full(ReleasedFile, carryOver: ReleasedFile?, to: Int)
    case upToDate(Int)
    /// A request no answer fits: `status` is the HTTP status (400), `message` says why.
    case refused(status: Int, message: String)
}

/// The JSON body of a full answer (`303 See Other`): the gzip database to download, its hash and
/// size, and the carry-over script (`{"kind": "full", "to": 4, "path": "4/stations.sqlite.gz",
/// "sha256": …, "bytes": …, "carry_over": "4/carry-over.sql", "carry_over_sha256": …}`).
public struct FullDownloadAnswer: Encodable, Sendable {
    /// The version the download brings the phone to.
    public let to: Int
    /// The gzip database.
    public let database: ReleasedFile
    /// The script the phone runs after it; nil in a folder made before carry-over scripts.
    public let carryOver: ReleasedFile?

    /// The body of `.full(database, carryOver: carryOver, to: to)`.
    public init(database: ReleasedFile, carryOver: ReleasedFile?, to: Int) {
        self.to = to
        self.database = database
        self.carryOver = carryOver
    }

    private enum CodingKeys: String, CodingKey {
        case kind, to, path, sha256, bytes, carryOver = "carry_over", carryOverSha256 = "carry_over_sha256"
    }

    /// Every key present, `null` for no carry-over.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(ClientDownload.Kind.full, forKey: .kind)
        try container.encode(to, forKey: .to)
        try container.encode(database.path, forKey: .path)
        try container.encode(database.sha256, forKey: .sha256)
        try container.encode(database.bytes, forKey: .bytes)
        try container.encode(carryOver?.path, forKey: .carryOver)
        try container.encode(carryOver?.sha256, forKey: .carryOverSha256)
    }
}

extension Manifest {
    /// The answer to a phone at data version `from` (the query's text, nil when absent).
    public func answer(from text: String?) -> UpdateAnswer {
        guard let text, !text.isEmpty else {
            return .refused(status: 400, message: "missing from: ask /update?from=V with the phone's data version (its user_version)")
        }
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.allSatisfy({ ("0"..."9").contains($0) }), let from = Int(text) else {
            return .refused(status: 400, message: "from \(text.quotedForMessage()) is not a data version (expected a whole number from 0 to \(newest))")
        }
        if from < 0 { return .refused(status: 400, message: "from \(from) is negative (expected a data version from 0 to \(newest))") }
        if from > newest {
            return .refused(status: 400, message: "from \(from) is newer than this server's newest data version \(newest) (is the phone asking the right server?)")
        }
        guard let released = version(newest) else {
            return .refused(status: 400, message: "the newest version \(newest) is not listed in the manifest")
        }
        if from == newest { return .upToDate(newest) }
        if let download = released.downloads.first(where: { $0.from == from }), download.kind == .delta,
           let delta = released.deltas.first(where: { $0.from == from }) {
            return .delta(delta.file, to: newest)
        }
        // A new install (0), a version without a delta, or one the manifest does not list.
        return .full(released.databaseGzip, carryOver: released.carryOver, to: newest)
    }

    /// The file a release folder serves at `path` (relative, as the manifest lists it), if any:
    /// the databases, their gzips, the deltas and the carry-over scripts, nothing else.
    public func listedFile(_ path: String) -> ReleasedFile? {
        for released in versions {
            for file in [released.database, released.databaseGzip] + released.deltas.map(\.file) + (released.carryOver.map { [$0] } ?? [])
            where file.path == path {
                return file
            }
        }
        return nil
    }
}
