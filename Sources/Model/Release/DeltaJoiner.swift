import Foundation
import StationManifest
import StationReleaseFolder
import StationSupport

/// Makes the deltas a release joins (`DeltaChainPlan.joinable`): for a version v, an older
/// checkpoint release a's delta from v and this release's delta from a, as one gzip member
/// (`GzipJoin`), on every core.
///
/// Both parts are hashed as they are copied and must be the files their entries list, and each
/// part's gzip trailer must give the length of SQL its entry says. The joined delta lists the
/// hash of each part's SQL (`ReleasedDelta.sqlParts`: the older delta's parts, then this
/// release's delta), so no part is inflated: hashing the whole joined SQL instead (the older
/// parts inflated and hashed, this release's part hashed again for every file joined through it)
/// costs CPU in proportion to the whole history. `verify` inflates every
/// joined file whole and hashes each part.
struct DeltaJoiner {
    /// The release folder as published, and the versions its manifest lists.
    let published: (folder: ReleaseFolder, versions: [ReleasedVersion])
    let building: ReleaseFolder
    let version: Int
    /// This release's deltas rendered from the master and published.
    let own: [ReleasedDelta]

    /// For each version of `joinable` (with the checkpoint it is joined through), its joined
    /// delta, or nil when the join would be larger than `limit` bytes (the database's gzip), or
    /// this release's own delta from the checkpoint was (it is then not published).
    func join(_ joinable: [Int: Int], upTo limit: Int) throws -> [(from: Int, delta: ReleasedDelta?)] {
        let ownByFrom = Dictionary(own.map { ($0.from, $0) }, uniquingKeysWith: { first, _ in first })
        let older = Dictionary(published.versions.map { ($0.version, $0) }, uniquingKeysWith: { first, _ in first })
        var answers: [(from: Int, delta: ReleasedDelta?)] = []
        var jobs: [Job] = []
        for (from, via) in joinable.sorted(by: { $0.key < $1.key }) {
            guard let second = ownByFrom[via], let first = older[via]?.deltas.first(where: { $0.from == from }),
                  case let job = Job(from: from, via: via, first: first, second: second), job.bytes <= limit else {
                answers.append((from, nil))
                continue
            }
            jobs.append(job)
        }
        let paths = JoinPaths(published: published.folder.path, building: building.path, version: version)
        // The oldest versions first: their files are the largest, so the last to end are short.
        let joined = ConcurrentWork.results(count: jobs.count) { index in try paths.join(jobs[index]) }
        for (job, result) in zip(jobs, joined) {
            answers.append((job.from, try result.get()))
        }
        return answers.sorted { $0.from < $1.from }
    }

    /// One delta to join: version `via`'s delta from `from`, then this release's delta from `via`.
    struct Job: Sendable {
        let from: Int
        let via: Int
        let first: ReleasedDelta
        let second: ReleasedDelta
        var bytes: Int { GzipJoin.joinedSize([first.file.bytes, second.file.bytes]) }
    }

    /// Where the parts are and where the joined file goes.
    private struct JoinPaths: Sendable {
        let published: String
        let building: String
        let version: Int

        /// Writes the joined file, and lists its SQL's parts from the parts' entries.
        func join(_ job: Job) throws -> ReleasedDelta {
            let relative = ReleaseLayout.delta(from: job.from, to: version)
            let path = (building as NSString).appendingPathComponent(relative)
            let firstPath = (published as NSString).appendingPathComponent(job.first.file.path)
            let file = DigestSink(next: try FileSink(path: path))
            let read = try GzipJoin.join([firstPath, (building as NSString).appendingPathComponent(job.second.file.path)], into: file)
            for (part, read) in zip([job.first, job.second], read) {
                if read.sha256 != part.file.sha256 {
                    throw disagreement(part, field: "file", "sha256 \(read.sha256)", listed: part.file.sha256)
                }
                // The file is the one listed, so a length other than its entry's is the entry's error.
                if read.contentLength != UInt32(truncatingIfNeeded: part.sqlBytes) {
                    throw disagreement(part, field: "sql_bytes", "\(read.contentLength) bytes of SQL (modulo 2^32, as its gzip trailer keeps it)",
                                       listed: "\(part.sqlBytes)", entryChanged: true)
                }
            }
            guard file.byteCount == job.bytes else { throw GzipError.corrupt(path) }
            guard let firstParts = job.first.hashedSQLParts else {
                throw disagreement(job.first, field: "sql_sha256", "null", listed: "no sql_parts either", entryChanged: true)
            }
            guard let secondParts = job.second.hashedSQLParts else {
                preconditionFailure("a delta rendered from the master without the hash of its SQL")
            }
            var statements = job.first.statements
            for (table, kinds) in job.second.statements {
                statements[table, default: [:]].merge(kinds, uniquingKeysWith: +)
            }
            return ReleasedDelta(
                from: job.from, to: version, file: ReleasedFile(path: relative, bytes: file.byteCount, sha256: file.sha256),
                sqlBytes: job.first.sqlBytes + job.second.sqlBytes, sqlSha256: nil, sqlParts: firstParts + secondParts,
                statements: statements, duplicates: job.first.duplicates + job.second.duplicates, via: job.via)
        }

        /// A part of a join that is not what its entry says: an older release's file changed since
        /// (or its manifest entry), or this release's own file.
        /// `entryChanged`: the file is the one listed, so its entry was changed since.
        private func disagreement(_ part: ReleasedDelta, field: String, _ found: String, listed: String,
                                  entryChanged: Bool = false) -> ReleaseError {
            // This release's own part is in its build folder: nothing published to restore.
            let (listing, hint) = part.to == version
                ? ("this release wrote", "its build folder changed while it ran; release again")
                : ("the manifest lists", (entryChanged ? "its entry in manifest.json changed since it was released; restore manifest.json"
                    : "the file changed since it was released; restore it") + " from a backup, or release into a new folder")
            return ReleaseError.manifest(.disagrees(published, [ManifestProblem(
                field: "versions[\(part.to)].deltas[from \(part.from)].\(field)", file: part.file.path,
                reason: "\(found), but \(listing) \(listed) (\(hint))")]))
        }
    }
}
