import Foundation
import StationSupport

/// Makes the deltas a release joins (`DeltaChainPlan.joinable`): for a version v, an older
/// checkpoint release a's delta from v and this release's delta from a, as one gzip member
/// (`GzipJoin`), on every core.
///
/// The older file is hashed as it is read and must be the one its manifest lists; the joined file
/// is inflated once (zlib checks its CRC-32) to measure and hash its SQL, which must be the parts'
/// SQL bytes one after the other.
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
        var results = [Result<ReleasedDelta, Error>?](repeating: nil, count: jobs.count)
        let paths = JoinPaths(published: published.folder.path, building: building.path, version: version)
        results.withUnsafeMutableBufferPointer { slots in
            let (slots, jobs) = (SlotsForConcurrentWrites(slots), jobs)
            DispatchQueue.concurrentPerform(iterations: jobs.count) { index in
                slots.buffer[index] = Result { try paths.make(jobs[index]) }
            }
        }
        for result in results {
            let delta = try result!.get()
            answers.append((delta.from, delta))
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

        func make(_ job: Job) throws -> ReleasedDelta {
            let relative = ReleaseLayout.delta(from: job.from, to: version)
            let path = (building as NSString).appendingPathComponent(relative)
            let firstPath = (published as NSString).appendingPathComponent(job.first.file.path)
            let file = DigestSink(next: try FileSink(path: path))
            let digests = try GzipJoin.join([firstPath, (building as NSString).appendingPathComponent(job.second.file.path)], into: file)
            for (part, digest) in zip([job.first, job.second], digests) where digest != part.file.sha256 {
                let listing = part.to == version ? "this release wrote" : "the manifest lists"
                throw ReleaseError.manifestDisagrees(published, [ManifestProblem(
                    field: "versions[\(part.to)].deltas[from \(part.from)].file", file: part.file.path,
                    reason: "sha256 \(digest), but \(listing) \(part.file.sha256) (the file changed since it was released; restore it from a backup, or release into a new folder)")])
            }
            let sql = DigestSink()
            try Gunzip.inflate(path, into: sql)
            guard sql.byteCount == job.first.sqlBytes + job.second.sqlBytes, file.byteCount == job.bytes else {
                throw GzipError.corrupt(path)
            }
            var statements = job.first.statements
            for (table, kinds) in job.second.statements {
                statements[table, default: [:]].merge(kinds, uniquingKeysWith: +)
            }
            return ReleasedDelta(
                from: job.from, to: version, file: ReleasedFile(path: relative, bytes: file.byteCount, sha256: file.sha256),
                sqlBytes: sql.byteCount, sqlSha256: sql.sha256, statements: statements,
                duplicates: job.first.duplicates + job.second.duplicates, via: job.via)
        }
    }
}

/// The results of `concurrentPerform`: each iteration writes only its own slot of a buffer that
/// outlives them all.
private struct SlotsForConcurrentWrites<Element>: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<Element>
    init(_ buffer: UnsafeMutableBufferPointer<Element>) { self.buffer = buffer }
}
