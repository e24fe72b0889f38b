import Foundation
import GRDB
import StationClient
import StationRelease
import StationSupport
import Testing

/// Every path leaves an app's objects as the app made them (`AppSchemaCorpus`: FTS5 with and
/// without content, an R-tree, rowid tables the app numbers, a foreign key into `stations`, …),
/// in both journal modes, and the app keeps writing throughout an update.
@Suite(.serialized) struct AppSchemaCorpusTests {
    let scratch = Scratch()

    func updater(_ phone: Phone, _ folder: ClientFolder) throws -> StationUpdater {
        StationUpdater(database: phone.url, configuration: .init(source: FolderReleaseSource(folder: folder.url), keys: [try folder.trustedKey]))
    }

    func update(_ phone: Phone, by path: UpdatePath, _ folder: ClientFolder) async throws {
        switch path {
        case .delta, .full:
            let outcome = try await updater(phone, folder).update()
            #expect(outcome.plan.method.rawValue == path.rawValue)
        case .bundled:
            #expect(try await updater(phone, folder).installBundled(folder.bundle))
        }
    }

    @Test(arguments: ["delete", "wal"])
    func everyPathKeepsEachAppObjectRowAndRowid(journalMode: String) async throws {
        let folder = try ClientFolder(scratch)
        let newestHash = try contentHash(ofDatabase: folder.newest + "/stations.sqlite")
        for (path, version) in AppDatabaseTests.paths {
            let phone = try Phone(folder, at: version, in: scratch, journalMode: journalMode)
            let asMade = try phone.corpusProblems()
            #expect(asMade == [], "the corpus as made")
            try await update(phone, by: path, folder)
            #expect(try phone.userVersion() == 5)
            let after = try phone.corpusProblems()
            #expect(after == [], "\(path) in \(journalMode) mode")
            #expect(try SyntheticCompletions.read(phone.path) == phone.expected, "\(path): each split's records once")
            #expect(try contentHash(ofDatabase: phone.path) == newestHash, "\(path): the release's tables are the release's")
            let queue = try DatabaseQueue(path: phone.path)
            #expect(try await queue.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == journalMode)
            try queue.close()
        }
    }

    /// A new install needs no file: the release's tables (and `completions`) are created in it.
    @Test func aNewInstallCreatesTheReleaseTablesInTheAppsOwnFile() async throws {
        let folder = try ClientFolder(scratch)
        let phone = try Phone(folder, at: 1, in: scratch, appTables: false)
        try FileManager.default.removeItem(atPath: phone.path)
        // The app made its own table first.
        let queue = try DatabaseQueue(path: phone.path)
        try await queue.write { try $0.execute(sql: "CREATE TABLE visits (station_cd INTEGER, day TEXT); INSERT INTO visits VALUES (1, 'x')") }
        try queue.close()
        #expect(try await updater(phone, folder).update().plan.method == .full)
        #expect(try contentHash(ofDatabase: phone.path) == contentHash(ofDatabase: folder.newest + "/stations.sqlite"))
        let reopened = try DatabaseQueue(path: phone.path)
        #expect(try await reopened.read { try String.fetchAll($0, sql: "SELECT day FROM visits") } == ["x"])
        try reopened.close()
    }

    /// The app writes through a pool configured as docs/clients.md shows, every 10 ms, while each
    /// path runs: no write fails with "database is locked", and every one is in the file after.
    @Test(arguments: ["delete", "wal"])
    func theAppKeepsWritingDuringEachPath(journalMode: String) async throws {
        let folder = try ClientFolder(scratch)
        for (path, version) in AppDatabaseTests.paths {
            let phone = try Phone(folder, at: version, in: scratch, journalMode: journalMode)
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            let pool = try DatabasePool(path: phone.path, configuration: configuration)
            let writer = AppWriter(pool: pool)
            writer.start()
            try await Task.sleep(for: .milliseconds(50))
            try await update(phone, by: path, folder)
            try await Task.sleep(for: .milliseconds(50))
            let (written, failures) = writer.stop()
            try pool.close()
            #expect(failures == [], "\(path) in \(journalMode) mode")
            #expect(written >= 5, "\(path): \(written) writes")
            let queue = try DatabaseQueue(path: phone.path)
            let notes = try await queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM notes WHERE body LIKE 'written during%'") }
            try queue.close()
            #expect(notes == written, "\(path) in \(journalMode) mode: every write is in the file")
            #expect(try AppSchemaCorpus.problems(phone.path) == [])
            #expect(try phone.userVersion() == 5)
        }
    }
}

/// An app's writer: a note every 10 ms on a thread of its own, until stopped.
final class AppWriter: @unchecked Sendable {
    // Mutable state is touched under `lock` alone.
    private let pool: DatabasePool
    private let lock = NSLock()
    private var running = true
    private var written = 0
    private var failures: [String] = []
    private let done = DispatchSemaphore(value: 0)

    init(pool: DatabasePool) { self.pool = pool }

    func start() {
        Thread.detachNewThread { [self] in
            var count = 0
            while lock.withLock({ running }) {
                count += 1
                do {
                    try pool.write { try $0.execute(sql: "INSERT INTO notes (body) VALUES (?)", arguments: ["written during the update \(count)"]) }
                    lock.withLock { written += 1 }
                } catch {
                    lock.withLock { failures.append("\(error)") }
                }
                Thread.sleep(forTimeInterval: 0.01)
            }
            done.signal()
        }
    }

    func stop() -> (written: Int, failures: [String]) {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { (written, failures) }
    }
}
