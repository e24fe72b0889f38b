import Foundation
import StationSupport

/// Makes the deltas a release joins (`DeltaChainPlan.joinable`): for a version v, an older
/// checkpoint release a's delta from v and this release's delta from a, as one gzip member
/// (`GzipJoin`), on every core.
///
/// The older file is hashed as it is read and must be the one its manifest lists. The joined
/// file's SQL is the parts' SQL one after the other, so it is measured and hashed from the parts:
/// the older part inflated, then this release's delta from a as the release wrote it beside its
/// build (`ownSQL`), neither inflated again nor held in memory. Inflating this release's delta
/// once per core for the files joined through it (as before) cost 0.03 s of CPU at 100,000
/// stations and 50 releases, and a second pass over the joins after the first. Each part's SQL
/// must be as long as its entry says. `verify` inflates every joined file whole.
struct DeltaJoiner {
    /// The release folder as published, and the versions its manifest lists.
    let published: (folder: ReleaseFolder, versions: [ReleasedVersion])
    let building: ReleaseFolder
    let version: Int
    /// This release's deltas rendered from the master and published.
    let own: [ReleasedDelta]

    /// Where, in the build folder, a release keeps the SQL of its delta from `from` while it joins
    /// deltas through it (removed with the build folder).
    static func ownSQL(from: Int) -> String { "delta-from-\(from).sql" }

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
        var joined = [Result<ReleasedDelta, Error>?](repeating: nil, count: jobs.count)
        joined.withUnsafeMutableBufferPointer { slots in
            let (slots, jobs) = (SlotsForConcurrentWrites(slots), jobs)
            DispatchQueue.concurrentPerform(iterations: jobs.count) { index in
                slots.buffer[index] = Result { try paths.join(jobs[index]) }
            }
        }
        for (job, result) in zip(jobs, joined) {
            answers.append((job.from, try result!.get()))
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

        /// Writes the joined file, and measures and hashes its SQL from the parts.
        func join(_ job: Job) throws -> ReleasedDelta {
            let relative = ReleaseLayout.delta(from: job.from, to: version)
            let path = (building as NSString).appendingPathComponent(relative)
            let firstPath = (published as NSString).appendingPathComponent(job.first.file.path)
            let file = DigestSink(next: try FileSink(path: path))
            let digests = try GzipJoin.join([firstPath, (building as NSString).appendingPathComponent(job.second.file.path)], into: file)
            for (part, digest) in zip([job.first, job.second], digests) where digest != part.file.sha256 {
                throw disagreement(part, field: "file", "sha256 \(digest)", listed: part.file.sha256)
            }
            guard file.byteCount == job.bytes else { throw GzipError.corrupt(path) }
            // The older part was hashed as it was copied; inflating it also has zlib check its CRC-32.
            let sql = DigestSink()
            try Gunzip.inflate(firstPath, into: sql, finishing: false)
            guard sql.byteCount == job.first.sqlBytes else {
                throw disagreement(job.first, field: "sql_bytes", "\(sql.byteCount) bytes of SQL", listed: "\(job.first.sqlBytes)")
            }
            // This release's part: the SQL it hashed as it wrote the file just copied.
            let keptPath = (building as NSString).appendingPathComponent(DeltaJoiner.ownSQL(from: job.via))
            let keptBytes: Int
            do {
                keptBytes = try MappedFile.withBytes(ofFile: keptPath) { bytes in
                    try sql.write(UnsafeRawBufferPointer(bytes))
                    return bytes.count
                }
            } catch let error as FileError {
                throw FileError(cannot: "read \(keptPath)", code: error.code, reason: error.code.map(FileError.systemWords) ?? error.message)
            }
            // The copy is this build's own, removed with it: a short one is a fault of this
            // release (a full disk, say), not a published file changed, so no backup helps.
            guard keptBytes == job.second.sqlBytes else {
                throw FileError(cannot: "read \(keptPath)", code: nil,
                                reason: "\(keptBytes) bytes, but the delta from \(job.via) wrote \(job.second.sqlBytes) bytes of SQL",
                                hint: "release again")
            }
            try sql.finish()
            var statements = job.first.statements
            for (table, kinds) in job.second.statements {
                statements[table, default: [:]].merge(kinds, uniquingKeysWith: +)
            }
            return ReleasedDelta(
                from: job.from, to: version, file: ReleasedFile(path: relative, bytes: file.byteCount, sha256: file.sha256),
                sqlBytes: sql.byteCount, sqlSha256: sql.sha256, statements: statements,
                duplicates: job.first.duplicates + job.second.duplicates, via: job.via)
        }

        /// A part of a join that is not what its entry says: an older release's file changed since
        /// (or its manifest entry), or this release's own file.
        private func disagreement(_ part: ReleasedDelta, field: String, _ found: String, listed: String) -> ReleaseError {
            let listing = part.to == version ? "this release wrote" : "the manifest lists"
            return ReleaseError.manifestDisagrees(published, [ManifestProblem(
                field: "versions[\(part.to)].deltas[from \(part.from)].\(field)", file: part.file.path,
                reason: "\(found), but \(listing) \(listed) (the file changed since it was released; restore it from a backup, or release into a new folder)")])
        }
    }
}

/// The results of `concurrentPerform`: each iteration writes only its own slot of a buffer that
/// outlives them all.
private struct SlotsForConcurrentWrites<Element>: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<Element>
    init(_ buffer: UnsafeMutableBufferPointer<Element>) { self.buffer = buffer }
}
