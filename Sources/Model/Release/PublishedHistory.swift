import Foundation
import GRDB
import StationManifest
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
/// - the version being released, when the folder has it already, must be built the same.
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

    /// Records what a release published.
    package static func record(version: Int, contentHash: String, _ db: Database) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO published_versions (version, content_hash, recorded_at) VALUES (?, ?, ?)",
                       arguments: [version, contentHash, UTCTimestamp.text(Date())])
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
        let recorded = try master.read(PublishedHistory.recorded)
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
                try PublishedHistory.record(version: released.version, contentHash: released.contentHash, db)
                return ((), true)
            }
            return nil
        } catch {
            return ErrorText.describe(error)
        }
    }
}
