import Foundation
import GRDB
import StationImport
import StationSchema
import Testing

/// A first import writes its pages with a rollback journal instead of WAL
/// (`MasterDatabase.withRollbackJournal`): the master must be in WAL again after it, whatever
/// happened, and an import beside another connection must not wait for the journal to change.
@Suite struct FirstImportJournalTests {
    let scratch = Scratch()

    /// Every import here journals, however small its files.
    static let journaling: ImportTuning = {
        var tuning = ImportTuning()
        tuning.rollbackJournalFromBytes = 0
        return tuning
    }()

    @Test func aFirstImportLeavesTheMasterInWAL() throws {
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        try Importer(database, tuning: Self.journaling).importSnapshot([Fixtures.base.path])
        #expect(try journalMode(database.path) == "wal")
        #expect(!FileManager.default.fileExists(atPath: database.path + "-journal"))
        #expect(try database.dataVersion() == 1)
    }

    /// Another connection holds the file open: the journal cannot change, so the import writes
    /// through WAL at once, and that connection reads the version once it is committed.
    @Test func aFirstImportBesideAnotherConnectionWritesThroughWAL() throws {
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        let other = try DatabaseQueue(path: database.path)
        #expect(try other.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM stations") } == 0)
        let started = Date()
        let report = try Importer(database, tuning: Self.journaling).importSnapshot([Fixtures.base.path])
        #expect(report.committed && report.version == 1)
        #expect(Date().timeIntervalSince(started) < MasterDatabase.busyTimeout, "the import waited for the other connection")
        #expect(try other.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM stations") } ?? 0 > 0)
        try other.close()
        #expect(try journalMode(database.path) == "wal")
    }

    /// A process killed while it writes with a rollback journal leaves a hot journal: SQLite
    /// rolls it back at the next read, and the next write puts the master back in WAL.
    @Test func aMasterLeftWithARollbackJournalIsBackInWALAtItsNextWrite() throws {
        let path = scratch.path("master.sqlite")
        // Released at once: no connection of this process holds the file.
        _ = try MasterDatabase.create(at: path)
        // sqlite3 begins writing pages with a rollback journal, then is killed: deterministically,
        // by the shell it starts itself.
        let script = """
            PRAGMA journal_mode = DELETE;
            PRAGMA cache_size = 2;
            BEGIN;
            CREATE TABLE junk AS WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 3000)
                SELECT randomblob(1000) AS b FROM s;
            .system kill -9 $PPID
            """
        let scriptPath = scratch.path("killed.sql")
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let killed = try CommandRunner.run(["bash", "-c", "sqlite3 '\(path)' < '\(scriptPath)'"], program: URL(fileURLWithPath: "/usr/bin/env"))
        #expect(killed.status != 0)
        #expect(FileManager.default.fileExists(atPath: path + "-journal"), "no hot journal was left")

        let reopened = try MasterDatabase.open(at: path)
        #expect(try reopened.dataVersion() == 0)
        #expect(try reopened.read { try $0.tableExists("junk") } == false)
        #expect(try journalMode(path) == "delete")
        // Any write, even one that commits nothing.
        try reopened.write { _ in ((), false) }
        #expect(try journalMode(path) == "wal")
        try Importer(reopened, tuning: Self.journaling).importSnapshot([Fixtures.base.path])
        #expect(try journalMode(path) == "wal")
        #expect(try reopened.dataVersion() == 1)
    }

    /// A small first import never switches the journal, so one that fails leaves the empty
    /// master byte for byte as it was.
    @Test func aSmallFirstImportThatFailsLeavesTheFileAsItWas() throws {
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        let before = try database.settledSHA256()
        #expect(throws: (any Error).self) {
            try Importer(database).importSnapshot([Fixtures.bad.appendingPathComponent("01-unterminated-quote.csv").path])
        }
        #expect(try database.settledSHA256() == before)
        #expect(try journalMode(database.path) == "wal")
    }

    private func journalMode(_ path: String) throws -> String? {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
    }
}
