import Foundation
import GRDB
import StationClient
import StationManifest
import StationRelease
import StationSchema
import StationSignatures
import StationSupport
import Testing

/// `StationUpdater` embedded as an app embeds it: the app's own tables (with an index, a trigger
/// and a view) and its open `DatabasePool` on the database, on each path.
@Suite(.serialized) struct AppDatabaseTests {
    let scratch = Scratch()

    func updater(_ phone: Phone, _ folder: ClientFolder, source: (any ReleaseSource)? = nil, lockTimeout: TimeInterval = 30,
                 onStep: @escaping @Sendable (UpdateStep) -> Void = { _ in }) throws -> StationUpdater {
        var configuration = StationUpdater.Configuration(
            source: source ?? FolderReleaseSource(folder: folder.url), keys: [try folder.trustedKey], partBytes: 4096, lockTimeout: lockTimeout)
        configuration.onStep = onStep
        return StationUpdater(database: phone.url, configuration: configuration)
    }

    /// Runs the update of `phone` by `path` (delta from 1, full from 4, bundled from 2).
    func update(_ phone: Phone, by path: UpdatePath, _ folder: ClientFolder, appData: AppDataHook? = nil,
                onStep: @escaping @Sendable (UpdateStep) -> Void = { _ in }) async throws {
        let updater = try updater(phone, folder, onStep: onStep)
        switch path {
        case .delta, .full:
            let outcome = try await updater.update(appData: appData)
            #expect(outcome.plan.method.rawValue == path.rawValue)
        case .bundled:
            #expect(try await updater.installBundled(folder.bundle, appData: appData))
        }
    }

    static let paths: [(UpdatePath, Int)] = [(.delta, 1), (.full, 4), (.bundled, 2)]

    @Test func anAppsTablesAndItsOpenPoolSurviveEachPath() async throws {
        let folder = try ClientFolder(scratch)
        for (path, version) in Self.paths {
            let phone = try Phone(folder, at: version, in: scratch)
            let pool = try DatabasePool(path: phone.path)
            #expect(try await pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM visits") } == 50)
            try await update(phone, by: path, folder)
            // The pool reads the new version, and what it writes lands in the file.
            #expect(try await pool.read { try Int.fetchOne($0, sql: "PRAGMA user_version") } == 5, "\(path)")
            try await pool.write { try $0.execute(sql: "INSERT INTO visits (station_cd, note) VALUES (9920602, 'after the update')") }
            try pool.close()
            let after = try AppTables.read(phone.path)
            #expect(after.objects == phone.app.objects, "\(path): the app's schema")
            #expect(after.rows.contains("51|9920602|after the update") && after.rows.contains("log 51 added"), "\(path): \(after.rows.suffix(3))")
            #expect(try SyntheticCompletions.read(phone.path) == phone.expected, "\(path): records")
            #expect(try contentHash(ofDatabase: phone.path) == contentHash(ofDatabase: folder.newest + "/stations.sqlite"), "\(path)")
            #expect(try leftovers(of: phone).isEmpty)
        }
    }

    /// The database's write lock is taken for the install's transaction alone: a write the app
    /// makes after the download (with the update lock held) lands, and stays after the install.
    @Test func aWriteBeforeTheInstallsTransactionIsKept() async throws {
        let folder = try ClientFolder(scratch)
        for (path, version) in Self.paths where path != .delta {
            let phone = try Phone(folder, at: version, in: scratch)
            let pool = try DatabasePool(path: phone.path)
            let failures = Locked<[String]>([])
            try await update(phone, by: path, folder, onStep: { step in
                guard step == (path == .full ? .downloaded : .locked) else { return }
                do {
                    try pool.write { try $0.execute(sql: "INSERT INTO visits (station_cd, note) VALUES (1110101, 'during the update')") }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            })
            try pool.close()
            #expect(failures.withLock { $0 } == [], "\(path): the app could not write before the install's transaction")
            #expect(try AppTables.read(phone.path).rows.contains("51|1110101|during the update"), "\(path)")
            #expect(try phone.userVersion() == 5)
        }
    }

    @Test func theHookRunsInTheUpdatesTransactionWithTheSplitsAfterTheVersion() async throws {
        let folder = try ClientFolder(scratch)
        for (path, version) in Self.paths {
            let phone = try Phone(folder, at: version, in: scratch)
            let told = Locked<[UpdateContext]>([])
            try await update(phone, by: path, folder, appData: { db, context in
                told.withLock { $0.append(context) }
                // The app's table is there on every path, and the new version's stations too.
                for split in context.splits {
                    try db.execute(sql: "INSERT INTO visits (station_cd, note) SELECT ?, 'moved' FROM visits WHERE station_cd = ?",
                                   arguments: [split.new, split.old])
                }
                #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM stations WHERE station_cd = 9920602") == 1)
            })
            let context = try #require(told.withLock { $0.first })
            let splits = folder.splits.filter { $0.version > version }.map { ReleaseSplit(old: $0.old, new: $0.new, version: $0.version) }
            #expect(context == UpdateContext(path: path, from: version, to: 5, splits: splits), "\(path)")
            #expect(!splits.isEmpty || version >= 3)
        }
        // A hook that throws rolls the update back: the database as it was, but for the trust record.
        for (path, version) in Self.paths {
            let phone = try Phone(folder, at: version, in: scratch)
            let before = try phone.contentBesideTrustRecord()
            struct AppFailure: Error {}
            await #expect { try await update(phone, by: path, folder, appData: { _, _ in throw AppFailure() }) } throws: { error in
                (error as? StationClientError)?.category == .appData && (error as? StationClientError)?.underlyingError is AppFailure
            }
            #expect(try phone.contentBesideTrustRecord() == before, "\(path)")
        }
    }

    @Test func whatTheDatabaseAcceptedTravelsWithItAndADamagedRecordRefuses() async throws {
        let folder = try ClientFolder(scratch)
        let older = scratch.path("older-mirror")
        try FileManager.default.copyItem(atPath: folder.path, toPath: older)
        try ManifestResigning.resign(folder: folder.path, signing: ManifestSigning(keys: [folder.key]))
        let sequence = try #require(try folder.manifest().sequence)
        // The full path: the record is written into the new content, in its transaction.
        let phone = try Phone(folder, at: 4, in: scratch)
        try await update(phone, by: .full, folder)
        let accepted = try #require(try updater(phone, folder).acceptedRelease())
        let lineage = try folder.database.lineage()
        #expect(accepted.sequence == sequence && accepted.dataset == lineage)
        #expect(!FileManager.default.fileExists(atPath: phone.path + ".trust.json"))
        // An older manifest replayed is a rollback, although the database changed file paths.
        await #expect { try await updater(phone, folder, source: FolderReleaseSource(folder: URL(fileURLWithPath: older))).check() } throws: { error in
            guard case .refused(.rollback(let replayed, let floor))? = error as? StationClientError else { return false }
            return replayed == sequence - 1 && floor == sequence
        }
        // A damaged record is refused, not taken for "nothing accepted".
        let queue = try DatabaseQueue(path: phone.path)
        try await queue.write { try $0.execute(sql: "DROP TABLE station_client_trust; CREATE TABLE station_client_trust (id, sequence); INSERT INTO station_client_trust VALUES (1, 'x')") }
        try queue.close()
        await #expect { try await updater(phone, folder, source: FolderReleaseSource(folder: URL(fileURLWithPath: older))).update() } throws: { error in
            guard case .damagedTrustState? = error as? StationClientError else { return false }
            return true
        }
        // So is an earlier library's record beside the database that does not read.
        let legacy = try Phone(folder, at: 1, in: scratch)
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: legacy.path + ".trust.json"))
        await #expect { try await updater(legacy, folder).update() } throws: { ($0 as? StationClientError)?.category == .unusableDatabase }
        #expect(try legacy.userVersion() == 1)
    }

    @Test func aDeltaThatEndsAtAnotherVersionIsRolledBack() async throws {
        let folder = try ClientFolder(scratch)
        var manifest = try folder.manifest()
        let newest = manifest.versions.count - 1
        let index = try #require(manifest.versions[newest].deltas.firstIndex { $0.from == 3 })
        let delta = manifest.versions[newest].deltas[index]
        // A delta that is signed and whole, but ends at version 4: the publisher's mistake.
        let gzip = folder.path + "/" + delta.file.path
        let sql = try #require(String(data: try Gunzip.read(gzip), encoding: .utf8))
        let wrong = Data(sql.replacingOccurrences(of: "PRAGMA user_version = 5;", with: "PRAGMA user_version = 4;").utf8)
        #expect(wrong != Data(sql.utf8))
        try gzipWithTheCommand(wrong, to: gzip)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: gzip))
        manifest.versions[newest].deltas[index].file = ReleasedFile(path: delta.file.path, bytes: bytes.count, sha256: ManifestSignatures.sha256(bytes))
        manifest.versions[newest].deltas[index].sqlBytes = wrong.count
        manifest.versions[newest].deltas[index].sqlSha256 = ManifestSignatures.sha256(wrong)
        manifest.versions[newest].deltas[index].sqlParts = nil
        try folder.publish(manifest)
        let phone = try Phone(folder, at: 3, in: scratch)
        let before = try phone.contentBesideTrustRecord()
        await #expect { try await updater(phone, folder).update() } throws: { error in
            guard case .wrongVersionAfterDelta(5, 4)? = error as? StationClientError else { return false }
            return true
        }
        #expect(try phone.contentBesideTrustRecord() == before)
    }

    @Test func aReadOnlyDatabaseIsRefusedOnEveryPath() async throws {
        let folder = try ClientFolder(scratch)
        for (path, version) in Self.paths {
            let phone = try Phone(folder, at: version, in: scratch)
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: phone.path)
            let before = try phone.contentBesideTrustRecord()
            await #expect { try await update(phone, by: path, folder) } throws: { error in
                guard case .readOnly? = error as? StationClientError else { return false }
                return true
            }
            #expect(try phone.contentBesideTrustRecord() == before, "\(path)")
            #expect(try FileManager.default.attributesOfItem(atPath: phone.path)[.posixPermissions] as? Int == 0o444)
        }
    }

    @Test func aPlanIsCarriedOutAsCheckedOrRefusedWhenTheManifestChanged() async throws {
        let folder = try ClientFolder(scratch)
        let phone = try Phone(folder, at: 1, in: scratch)
        let updater = try updater(phone, folder)
        let plan = try await updater.check()
        #expect(plan.method == .delta && plan.from == 1 && plan.to == 5 && plan.fullDownloadBytes > plan.downloadBytes)
        // The app chooses the full download over the delta.
        let full = plan.preferringFull()
        #expect(full.method == .full && full.downloadBytes == plan.fullDownloadBytes)
        try ManifestResigning.resign(folder: folder.path, signing: ManifestSigning(keys: [folder.key]))
        await #expect { try await updater.update(full) } throws: { ($0 as? StationClientError)?.category == .checkAgain }
        #expect(try phone.userVersion() == 1)
        let outcome = try await updater.update(try await updater.check().preferringFull())
        #expect(outcome.plan.method == .full && outcome.downloadedBytes == full.downloadBytes)
        #expect(try SyntheticCompletions.read(phone.path) == phone.expected && AppTables.read(phone.path) == phone.app)
    }

    /// On each path the progress is a sequence the updater returns: each stage in one unit (bytes
    /// downloaded, bytes inflated, rows or SQL bytes installed), and the whole update's fraction,
    /// which never goes down and ends at 1.
    @Test func progressTellsEachStageInItsUnitAndAFractionThatOnlyGrows() async throws {
        let folder = try ClientFolder(scratch)
        let gzip = try #require(try folder.manifest().version(5)?.databaseGzip)
        for (path, version) in Self.paths {
            let phone = try Phone(folder, at: version, in: scratch)
            let updater = try updater(phone, folder)
            var seen: [UpdateProgress] = []
            switch path {
            case .delta, .full:
                let running = updater.startUpdate()
                for await step in running.progress { seen.append(step) }
                #expect(try await running.outcome.plan.method.rawValue == path.rawValue)
            case .bundled:
                let running = updater.startInstallingBundled(folder.bundle)
                for await step in running.progress { seen.append(step) }
                #expect(try await running.outcome)
            }
            #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.fractionCompleted <= $1.fractionCompleted }, "\(path): the fraction went down")
            #expect(seen.last?.fractionCompleted == 1, "\(path): \(String(describing: seen.last))")
            #expect(seen.last.map { $0.stage == .installing && $0.completed == $0.total } == true, "\(path)")
            let installing = seen.filter { $0.stage == .installing }
            #expect(Set(installing.map(\.unit)) == [path == .delta ? .bytes : .rows], "\(path): one unit for the stage")
            if path == .full {
                let downloads = seen.filter { $0.stage == .downloading(gzip.path) }
                #expect(downloads.last == UpdateProgress(stage: .downloading(gzip.path), completed: gzip.bytes, total: gzip.bytes, unit: .bytes,
                                                         fractionCompleted: 0.5))
                #expect(seen.contains { $0.stage == .inflating && $0.unit == .bytes })
            }
        }
    }

    @Test func cancellationPassesThroughAndChangesNothing() async throws {
        let folder = try ClientFolder(scratch)
        let phone = try Phone(folder, at: 4, in: scratch)
        let before = try phone.contentBesideTrustRecord()
        let stalled = StalledSource(folder: FolderReleaseSource(folder: folder.url))
        let updater = try updater(phone, folder, source: stalled)
        let task = Task { try await updater.update() }
        while !stalled.isStalled { try await Task.sleep(nanoseconds: 10_000_000) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try phone.contentBesideTrustRecord() == before)
    }

    /// Another updater (another process: an app's background task) holds `<database>.lock`: one
    /// that waits 0.2 s gives up with `busy` and changes nothing; one that waits longer updates
    /// once the holder lets go. The holder is a lock of the test's own, not an updater blocked in
    /// a step callback, which would hold one of the cooperative pool's two threads on a two-core
    /// host while the waiting updater's sleep needs one to wake.
    @Test func aSecondUpdaterWaitsForTheFirstOrIsBusy() async throws {
        let folder = try ClientFolder(scratch)
        let phone = try Phone(folder, at: 4, in: scratch)
        let before = try phone.contentBesideTrustRecord()
        let holder = open(phone.path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        #expect(holder >= 0 && flock(holder, LOCK_EX | LOCK_NB) == 0, "the test holds the update lock")
        await #expect { try await updater(phone, folder, lockTimeout: 0.2).update() } throws: { ($0 as? StationClientError)?.category == .busy }
        #expect(try phone.contentBesideTrustRecord() == before, "a busy updater changes nothing")
        // The holder lets go half a second into the next updater's wait, from a thread of its own.
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) {
            flock(holder, LOCK_UN)
            close(holder)
        }
        let waited = try await updater(phone, folder, lockTimeout: 30).update()
        #expect(waited.plan.from == 4 && waited.plan.to == 5 && waited.plan.method != .upToDate, "\(waited.plan)")
        #expect(try SyntheticCompletions.read(phone.path) == phone.expected)
    }

    @Test func aPubFileOfSeveralKeysTrustsEachOrIsRefusedAsOne() throws {
        let first = try SigningKey.generate(to: scratch.path("first")), second = try SigningKey.generate(to: scratch.path("second"))
        let rotation = scratch.path("rotation.pub")
        let lines = try [first, second].map { try String(contentsOfFile: $0.path + ".pub", encoding: .utf8) }
        try ("# 2026 and 2027\n" + lines.joined()).write(toFile: rotation, atomically: true, encoding: .utf8)
        #expect(try TrustedKey.all(contentsOfFile: rotation).map(\.id) == [first.publicKey.id, second.publicKey.id])
        #expect(throws: SignatureError.self) { try TrustedKey(contentsOfFile: rotation) }
        try (lines[0] + "not a key\n").write(toFile: rotation, atomically: true, encoding: .utf8)
        #expect { try TrustedKey.all(contentsOfFile: rotation) } throws: { "\($0.localizedDescription)".contains("rotation.pub:2") }
    }
}

/// A source that stops at the first chunk of the database's gzip until cancelled.
final class StalledSource: ReleaseSource {
    let folder: FolderReleaseSource
    private let stalled = Locked(false)

    init(folder: FolderReleaseSource) { self.folder = folder }

    var isStalled: Bool { stalled.withLock { $0 } }

    func read(_ request: SourceRequest, into receive: @escaping @Sendable (SourceChunk) throws -> Void) async throws {
        if request.path.hasSuffix("stations.sqlite.gz") {
            stalled.withLock { $0 = true }
            while true { try await Task.sleep(nanoseconds: 10_000_000) }
        }
        try await folder.read(request, into: receive)
    }
}
