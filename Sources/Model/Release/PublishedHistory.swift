import Foundation
import GRDB
import StationManifest
import StationReleaseFolder
import StationSchema
import StationSupport

/// What phones have: a published version never changes, not even when a master restored from
/// a backup releases again under the same paths and ETags. The master records the content hash of each version
/// it released (`published_versions`); before a release writes into a folder, the folder's
/// manifest is compared with the master's history:
///
/// - a folder whose newest version is newer than the master's is never rolled back;
/// - each version both have must have the same content: the master's record, or for the
///   folder's newest version, when the master has no record of it, its content rebuilt;
/// - the version being released, when the folder has it already, must be built the same;
/// - each version the master recorded the entry of (every file's path, size and SHA-256, each
///   delta's SQL hashes) must be listed as recorded: a folder writer who changes a file and its
///   entry gets nothing signed, and a delta is joined only through an older one the master made.
///
/// For example, a folder of 1…5 and a master restored from its version-3 backup and edited to a
/// new version 4 is refused (the folder is ahead); the same master edited on to 6 is refused at 4
/// (recorded) or 5 (rebuilt), naming both hashes.
package enum PublishedHistory {
    /// The content hashes the master recorded, by version.
    package static func recorded(_ db: Database) throws -> [Int: String] {
        guard try db.tableExists("published_versions") else { return [:] }
        return Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT version, content_hash FROM published_versions").map { ($0[0], $0[1]) })
    }

    /// The manifest entries the master recorded as it published them, by version: the versions
    /// published before entries were recorded have none.
    package static func recordedEntries(_ db: Database) throws -> [Int: ReleasedVersion] {
        guard try db.tableExists("published_versions"), try db.columns(in: "published_versions").contains(where: { $0.name == "entry" }) else { return [:] }
        var entries: [Int: ReleasedVersion] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT version, entry FROM published_versions WHERE entry IS NOT NULL") {
            entries[row[0]] = try JSONDecoder().decode(ReleasedVersion.self, from: Data((row[1] as String).utf8))
        }
        return entries
    }

    /// Records what a release published: the version's content hash and its whole entry.
    package static func record(_ released: ReleasedVersion, _ db: Database) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO published_versions (version, content_hash, recorded_at, entry) VALUES (?, ?, ?, ?)",
                       arguments: [released.version, released.contentHash, UTCTimestamp.text(Date()),
                                   String(decoding: try Manifest.encodedEntry(released), as: UTF8.self)])
    }

    /// Where `manifest` lists other files or values than the master recorded for the versions it
    /// has entries of: each file named (a database, its gzip, the carry-over script, a delta),
    /// with what the folder lists and what the master published. Empty when they agree.
    package static func disagreements(of manifest: Manifest, with recorded: [Int: ReleasedVersion]) -> [ManifestProblem] {
        manifest.versions.flatMap { listed -> [ManifestProblem] in
            guard let published = recorded[listed.version], published != listed else { return [] }
            return differences(listed, published)
        }
    }

    private static func differences(_ listed: ReleasedVersion, _ published: ReleasedVersion) -> [ManifestProblem] {
        let field = "versions[\(listed.version)]"
        var problems: [ManifestProblem] = []
        func compare(_ name: String, _ listed: ReleasedFile?, _ published: ReleasedFile?) {
            guard listed != published else { return }
            problems.append(ManifestProblem(field: "\(field).\(name)", file: listed?.path ?? published?.path,
                                            reason: "the folder lists \(describe(listed)), the master published \(describe(published))"))
        }
        compare("database", listed.database, published.database)
        compare("database_gzip", listed.databaseGzip, published.databaseGzip)
        compare("carry_over", listed.carryOver, published.carryOver)
        let publishedDeltas = Dictionary(published.deltas.map { ($0.from, $0) }, uniquingKeysWith: { first, _ in first })
        let listedFroms = Set(listed.deltas.map(\.from))
        for delta in listed.deltas where delta != publishedDeltas[delta.from] {
            let theirs = publishedDeltas[delta.from]
            let reason = theirs.map { "the folder lists \(describe(delta.file)) with \(delta.sqlBytes) bytes of SQL, the master published "
                + "\(describe($0.file)) with \($0.sqlBytes)\($0.file == delta.file && $0.sqlBytes == delta.sqlBytes ? " (its SQL's hashes or counts differ)" : "")" }
                ?? "the master published no delta from \(delta.from) in this version"
            problems.append(ManifestProblem(field: "\(field).deltas[from \(delta.from)]", file: delta.file.path, reason: reason))
        }
        for delta in published.deltas where !listedFroms.contains(delta.from) {
            problems.append(ManifestProblem(field: "\(field).deltas[from \(delta.from)]", file: delta.file.path,
                                            reason: "the master published it, and the folder lists none"))
        }
        if problems.isEmpty {
            // The files agree: what differs is the entry's other fields.
            let names = [("content_hash", listed.contentHash == published.contentHash), ("rows", listed.rows == published.rows),
                         ("downloads", listed.downloads == published.downloads), ("splits", listed.splits == published.splits),
                         ("client_schema", listed.clientSchema == published.clientSchema)].filter { !$0.1 }.map(\.0)
            problems.append(ManifestProblem(field: field, file: nil,
                                            reason: "its \(names.isEmpty ? "entry" : names.joined(separator: ", ")) differs from what the master published"))
        }
        return problems
    }

    private static func describe(_ file: ReleasedFile?) -> String {
        file.map { "\($0.bytes) bytes, sha256 \($0.sha256)" } ?? "no file"
    }
}

extension Publisher {
    /// Refuses a release whose master disagrees with what `folder` published: see `PublishedHistory`.
    ///
    /// - Parameters:
    ///   - manifest: the folder's manifest, nil for a new folder.
    ///   - released: the version this release built.
    ///   - newest: the master's newest version, in the state the release read.
    ///   - scratch: a folder of the release's own where a version may be built to compare.
    package func requirePublishedHistory(_ manifest: Manifest?, folder: String, released: ReleasedVersion, newest: Int, scratch: String) throws {
        guard let manifest, !manifest.versions.isEmpty else { return }
        if manifest.newest > newest {
            throw ReleaseError.folderAhead(folder, folderNewest: manifest.newest, masterNewest: newest)
        }
        let (recorded, entries) = try master.read { try (PublishedHistory.recorded($0), PublishedHistory.recordedEntries($0)) }
        // What the folder lists is signed again with this release: it must be what the master made.
        let problems = PublishedHistory.disagreements(of: manifest, with: entries)
        if !problems.isEmpty { throw ReleaseError.notWhatTheMasterPublished(folder, problems) }
        for published in manifest.versions {
            let masterHash = published.version == released.version ? released.contentHash : recorded[published.version]
            if let masterHash, masterHash != published.contentHash {
                throw ReleaseError.publishedVersionDiffers(folder, version: published.version, folderHash: published.contentHash, masterHash: masterHash)
            }
        }
        // The folder's newest version is what the deltas of this release start from: when the
        // master has no record of it (released from another copy, or before records), it is built.
        let newestPublished = manifest.versions.last!
        if recorded[newestPublished.version] == nil && newestPublished.version != released.version {
            let path = (scratch as NSString).appendingPathComponent("published-\(newestPublished.version).sqlite")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let built = try buildClientDatabase(version: newestPublished.version, at: path)
            if built.contentHash != newestPublished.contentHash {
                throw ReleaseError.publishedVersionDiffers(folder, version: newestPublished.version,
                                                           folderHash: newestPublished.contentHash, masterHash: built.contentHash)
            }
        }
    }

    /// Records the content hash of a version a release published. The release is published
    /// whatever happens here (a release from a read-only master learns the hash again from the
    /// folder next time), so a failure is told, not thrown.
    ///
    /// - Returns: why the record could not be written, or nil.
    package func recordPublished(_ released: ReleasedVersion) -> String? {
        do {
            try master.write { db in
                try PublishedHistory.record(released, db)
                return ((), true)
            }
            return nil
        } catch {
            return ErrorText.describe(error)
        }
    }
}
