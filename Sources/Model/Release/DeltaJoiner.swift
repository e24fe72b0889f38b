import Foundation
import StationSupport

/// Makes the deltas a release joins (`DeltaChainPlan.joinable`): for a version v, an older
/// checkpoint release a's delta from v and this release's delta from a, as one gzip member
/// (`GzipJoin`), on every core.
///
/// The older file is hashed as it is read and must be the one its manifest lists. The joined
/// file's SQL is the parts' SQL one after the other, so it is measured and hashed from the parts:
/// each older part is inflated once, and this release's delta from a checkpoint once for all the
/// deltas joined through it (at 100,000 stations and 50 releases, inflating each joined file read
/// the delta from version 16 fifteen times). Each part's SQL must be as long as its manifest says.
/// `verify` inflates every joined file whole.
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
        // Each joined file copied, and its SQL hashed as far as its older part goes…
        var copies = [Result<JoinedCopy, Error>?](repeating: nil, count: jobs.count)
        copies.withUnsafeMutableBufferPointer { slots in
            let (slots, jobs) = (SlotsForConcurrentWrites(slots), jobs)
            DispatchQueue.concurrentPerform(iterations: jobs.count) { index in
                slots.buffer[index] = Result { try paths.copy(jobs[index]) }
            }
        }
        let joined = try copies.map { try $0!.get() }
        // …then on through this release's delta from each checkpoint, inflated once per core for
        // the files joined through it.
        let units = Self.hashingUnits(jobs.indices.map { (via: jobs[$0].via, second: jobs[$0].second, sink: joined[$0].sql) },
                                      cores: ProcessInfo.processInfo.activeProcessorCount)
        var hashed = [Result<Void, Error>?](repeating: nil, count: units.count)
        hashed.withUnsafeMutableBufferPointer { slots in
            let slots = SlotsForConcurrentWrites(slots), units = ElementsForConcurrentWork(units)
            DispatchQueue.concurrentPerform(iterations: units.count) { index in
                let unit = units.elements[index]
                slots.buffer[index] = Result { try paths.hashOn(unit.second, into: unit.sinks, checking: unit.checks) }
            }
        }
        for result in hashed { try result!.get() }
        // Each part's SQL was measured against its entry: the two together are the joined file's.
        for (job, copy) in zip(jobs, joined) {
            var delta = copy.delta
            delta.sqlBytes = copy.sql.byteCount
            delta.sqlSha256 = copy.sql.sha256
            answers.append((job.from, delta))
        }
        return answers.sorted { $0.from < $1.from }
    }

    /// Work for one core: this release's delta `second` inflated into `sinks`, the digests of
    /// files joined through it, and checked against its entry when `checks`.
    struct HashingUnit {
        let second: ReleasedDelta
        let sinks: [DigestSink]
        let checks: Bool
    }

    /// The files joined through one checkpoint, split into as many units as there are cores,
    /// each inflating the delta again, the largest first. Whole, the group through the oldest
    /// checkpoint was most of the hashing (at 100,000 stations and 50 releases, 15 files through
    /// 4.3 MB of SQL) and kept one core busy while the other waited: 0.1 s of a 1.4 s release.
    static func hashingUnits(_ files: [(via: Int, second: ReleasedDelta, sink: DigestSink)], cores: Int) -> [HashingUnit] {
        var units: [HashingUnit] = []
        for (_, group) in Dictionary(grouping: files, by: \.via).sorted(by: { $0.key < $1.key }) {
            let size = (group.count + max(1, cores) - 1) / max(1, cores)
            for start in stride(from: 0, to: group.count, by: size) {
                units.append(HashingUnit(second: group[start].second, sinks: group[start..<min(start + size, group.count)].map(\.sink),
                                         checks: start == 0))
            }
        }
        // Stable: equal units stay in checkpoint order.
        return units.enumerated().sorted { a, b in
            let (x, y) = (a.element.second.sqlBytes * a.element.sinks.count, b.element.second.sqlBytes * b.element.sinks.count)
            return x != y ? x > y : a.offset < b.offset
        }.map(\.element)
    }

    /// A joined file written, its SQL's digest having taken the older part's.
    private struct JoinedCopy {
        var delta: ReleasedDelta
        let sql: DigestSink
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

        func copy(_ job: Job) throws -> JoinedCopy {
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
            var statements = job.first.statements
            for (table, kinds) in job.second.statements {
                statements[table, default: [:]].merge(kinds, uniquingKeysWith: +)
            }
            let delta = ReleasedDelta(
                from: job.from, to: version, file: ReleasedFile(path: relative, bytes: file.byteCount, sha256: file.sha256),
                sqlBytes: 0, sqlSha256: "", statements: statements,
                duplicates: job.first.duplicates + job.second.duplicates, via: job.via)
            return JoinedCopy(delta: delta, sql: sql)
        }

        /// Inflates this release's delta `second` into the SQL digests of files joined through it,
        /// and with `checking` checks its SQL against its entry.
        func hashOn(_ second: ReleasedDelta, into sinks: [DigestSink], checking: Bool) throws {
            let path = (building as NSString).appendingPathComponent(second.file.path)
            guard checking else { return try Gunzip.inflate(path, into: TeeSink(sinks)) }
            let counted = DigestSink()
            try Gunzip.inflate(path, into: TeeSink(sinks + [counted]))
            guard counted.byteCount == second.sqlBytes else {
                throw disagreement(second, field: "sql_bytes", "\(counted.byteCount) bytes of SQL", listed: "\(second.sqlBytes)")
            }
            guard counted.sha256 == second.sqlSha256 else {
                throw disagreement(second, field: "sql_sha256", "SQL of sha256 \(counted.sha256)", listed: second.sqlSha256)
            }
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

/// What each iteration of `concurrentPerform` works on: its own element only (its sinks are
/// written by that iteration alone).
private struct ElementsForConcurrentWork<Element>: @unchecked Sendable {
    let elements: [Element]
    init(_ elements: [Element]) { self.elements = elements }
    var count: Int { elements.count }
}
