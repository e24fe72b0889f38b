import Foundation
import GRDB
import StationDelta
import StationManifest
import StationSchema
import StationSupport
import Synchronization

// The types a release build hands between its two connections and threads (`ReleaseBuild`).

/// What the twin connection of a build hands back once it ends (its deltas went by `DeltaHandOff`):
/// the content hash of the newest version, nil when the master's tables do not hold the file's values.
struct TwinBuild: Sendable {
    var contentHash: String?
}

/// The deltas the twin renders, handed over as soon as they are written (its content hash
/// follows them), or the error that stopped it.
final class DeltaHandOff: Sendable {
    private let delivered = Mutex<Result<RenderedDeltas, Error>?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    /// The first delivery counts; a later one (the twin's end, after its deltas) is ignored.
    func deliver(_ result: Result<RenderedDeltas, Error>) {
        let isFirst = delivered.withLock { slot in
            guard case .none = slot else { return false }
            slot = result
            return true
        }
        if isFirst { ready.signal() }
    }

    func wait() throws -> RenderedDeltas {
        ready.wait()
        ready.signal()
        return try delivered.withLock { $0! }.get()
    }
}

/// The deltas a release rendered, and the plan of the rest.
struct RenderedDeltas: Sendable {
    var plan: DeltaChainPlan
    var written: [(from: Int, path: String, delta: WrittenDelta)]
}

/// The releases already in a folder: its manifest, read and checked (and its lineage compared)
/// on another thread while the build begins.
struct PublishedReleases: Sendable {
    let folder: ReleaseFolder
    /// With the bytes it was read from, from which the next manifest is written.
    let manifest: BackgroundTask<ManifestFile?>

    /// The folder's releases, once its manifest is read; its error if it cannot take this release.
    func versions() throws -> [ReleasedVersion] { try manifest.wait()?.manifest.versions ?? [] }
}

/// Renders the deltas of a release (`DeltaChainPlan`) into its build folder, on whichever
/// connection reads the release's state.
struct DeltaRendering: Sendable {
    let published: PublishedReleases
    let building: ReleaseFolder
    let spacing: Int
    let abandoned: BuildAbandonment
    let declared: DeclaredSchema

    func render(_ db: Database, version: Int, newest: Int) throws -> RenderedDeltas {
        let published = (folder: published.folder, versions: try published.versions())
        // Version 0 is no client: a new install downloads the database.
        // An older delta is joined only when the master recorded publishing it as the folder
        // lists it (the joiner then checks its bytes against that entry); any other is rendered.
        let recorded = try PublishedHistory.recordedEntries(db)
        var plan = DeltaChainPlan.make(version: version, released: published.versions, spacing: spacing) { delta in
            recorded[delta.to]?.deltas.contains(delta) == true && GzipJoin.isJoinable(published.folder.filePath(delta.file.path))
        }
        var written: [(from: Int, path: String, delta: WrittenDelta)] = []
        func render(_ froms: [Int]) throws {
            guard !froms.isEmpty else { return }
            Progress.phase("rendering the deltas' statements")
            let writer = try DeltaWriter.prepare(db, declared, froms: froms, to: version, newest: newest)
            Progress.phase("writing deltas", total: froms.count)
            for (index, from) in froms.enumerated() {
                if abandoned.isAbandoned { throw CancellationError() }
                Progress.update(index)
                let deltaPath = ReleaseLayout.delta(from: from, to: version)
                written.append((from, deltaPath, try writer.write(
                    db, from: from, gzip: true, transaction: false, into: .file(building.filePath(deltaPath)))))
            }
            try writer.finish(db)
        }
        try render(plan.rendered)
        // A join larger than a database (the newest release's, this one's being unknown yet)
        // is rendered instead: rows changed back and forth on both sides of the step make the
        // join large and the delta itself small (connections added, then removed).
        if let databaseBytes = published.versions.last(where: { $0.version < version })?.databaseGzip.bytes {
            let own = Dictionary(written.map { ($0.from, $0.delta.gzipBytes) }, uniquingKeysWith: { first, _ in first })
            let olderDeltas = Dictionary(published.versions.map { ($0.version, $0.deltas) }, uniquingKeysWith: { first, _ in first })
            let large = plan.joinable.filter { from, via in
                guard let first = olderDeltas[via]?.first(where: { $0.from == from }), let second = own[via] else { return true }
                return GzipJoin.joinedSize([first.file.bytes, second]) > databaseBytes
            }.keys.sorted()
            for from in large { plan.joinable[from] = nil }
            try render(large)
        }
        return RenderedDeltas(plan: plan, written: written)
    }
}

/// Set when the build fails on its main connection (a version's checks): the twin renders no
/// more deltas, so the error is told without waiting for them.
final class BuildAbandonment: Sendable {
    private let state = Mutex(false)
    func abandon() { state.withLock { $0 = true } }
    var isAbandoned: Bool { state.withLock { $0 } }
}
