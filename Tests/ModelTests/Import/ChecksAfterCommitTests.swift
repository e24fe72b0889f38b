import Foundation
import GRDB
import StationCheck
import StationCurate
import StationImport
import StationSchema
import StationSynth
import Testing

/// A large import is checked after its commit (`ImportTuning.checksAfterCommitFromStations`):
/// its version is in the master whatever happens between the two transactions, and what
/// happens there never leaves a wrong set of findings recorded. `IncrementalCheckTests` holds the
/// checks made so to a full check; these tests stop or cut in between, through the seam
/// `ImportTuning.afterCommit`.
@Suite struct ChecksAfterCommitTests {
    let scratch = Scratch()

    struct Killed: Error {}

    /// The options of every import here: the synthetic changes close many rows.
    static let massClose = ImportOptions(allowMassClose: true)

    /// The base fixture and a next snapshot changing a quarter of it, imported to be checked
    /// after its commit (seed 4's has a split suggestion).
    private func baseAndNext(seed: UInt64 = 7) throws -> (MasterDatabase, String, ImportTuning) {
        let database = try scratch.baseDatabase()
        let next = scratch.path("next")
        try SnapshotSynthesizer.next(of: Fixtures.base.path, changePercent: 25, seed: seed, into: next)
        var tuning = ImportTuning()
        tuning.checksAfterCommitFromStations = 0
        return (database, next, tuning)
    }

    private func recorded(_ database: MasterDatabase) throws -> Set<FindingIdentity>? {
        try database.read { db in try RecordedFindings.identities(db, version: try MasterDatabase.dataVersion(db)) }
    }

    /// Killed after the commit: the version is in the master, no findings are recorded as its,
    /// and the next import, finding none, checks the version before from the history: what it
    /// records and reports is what full checks find.
    @Test func killedBetweenTheCommitAndTheChecksTheNextImportChecksWhole() throws {
        var (database, next, tuning) = try baseAndNext()
        tuning.afterCommit = { throw Killed() }
        #expect(throws: Killed.self) { try Importer(database, tuning: tuning).importSnapshot([next], options: Self.massClose) }
        #expect(try database.dataVersion() == 2, "the version is committed")
        #expect(try database.read { try RecordedFindings.isRecorded(2, $0) } == false)
        #expect(try database.read { try Int.fetchOne($0, sql: "PRAGMA wal_autocheckpoint") } == 1000, "the handle checkpoints again")

        let before = Set(try Checker(database).check().findings.map(\.identity))
        let following = scratch.path("following")
        try SnapshotSynthesizer.next(of: next, changePercent: 25, seed: 8, into: following)
        let report = try Importer(database, tuning: tuning).importSnapshot([following], options: Self.massClose)
        #expect(report.committed && report.version == 3 && report.warnings.allSatisfy { !$0.contains("is committed, but") })
        let full = try Checker(database).check().findings
        #expect(try recorded(database) == Set(full.map(\.identity)))
        let introduced = IntroducedFindings(full.filter { !before.contains($0.identity) })
        #expect(report.findingCounts == Dictionary(uniqueKeysWithValues: CheckRule.allCases.map { ($0.rawValue, introduced.counts[$0] ?? 0) }))
    }

    /// The findings' transaction fails (another process holds the write lock past the handle's
    /// busy timeout) while the split suggestions, read beside it, are found: the report keeps
    /// the suggestions and warns of the findings alone, naming the command that shows them.
    @Test func findingsThatFailLeaveTheSplitSuggestionsMade() throws {
        let (base, next, tuning) = try baseAndNext(seed: 4)
        let database = try MasterDatabase.open(at: base.path, busyTimeout: 0.2)
        let lockHolder = try DatabaseQueue(path: base.path)
        let taken = DispatchSemaphore(value: 0), released = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        var held = tuning
        held.afterCommit = {
            // Another process's writer: it holds the lock on a thread of its own until released.
            DispatchQueue.global().async {
                defer { done.signal() }
                try? lockHolder.writeWithoutTransaction { db in
                    try db.execute(sql: "BEGIN IMMEDIATE")
                    defer { try? db.execute(sql: "ROLLBACK") }
                    taken.signal()
                    released.wait()
                }
            }
            guard taken.wait(timeout: .now() + 10) == .success else { throw Killed() }
        }
        let report = try Importer(database, tuning: held).importSnapshot([next], options: Self.massClose)
        released.signal()
        done.wait()

        #expect(report.committed && report.version == 2)
        #expect(report.warnings.contains {
            $0.hasPrefix("version 2 is committed, but finding its findings failed: ") && $0.hasSuffix("check --version 2)")
        }, "\(report.warnings)")
        #expect(!report.warnings.contains { $0.contains("split suggestions") }, "\(report.warnings)")
        let suggestions = try Checker(database).suggestSplits(version: 2)
        #expect(!suggestions.isEmpty, "the fixture's change has split suggestions")
        #expect(report.suggestions == suggestions)
        #expect(report.totalFindings == 0)
        #expect(try database.read { try RecordedFindings.isRecorded(2, $0) } == false)
    }

    /// The checks after the commit read through a page cache of their own size
    /// (`ImportTuning.checksAfterCommitCacheKiB`); the handle goes back to the one it had, for
    /// whatever a library's caller does with it next.
    @Test func theChecksCacheIsTheirsAlone() throws {
        let (database, next, tuning) = try baseAndNext()
        let cacheBefore = try database.read { try Int.fetchOne($0, sql: "PRAGMA cache_size") }
        let report = try Importer(database, tuning: tuning).importSnapshot([next], options: Self.massClose)
        #expect(report.committed && report.warnings.allSatisfy { !$0.contains("is committed, but") })
        #expect(try database.read { try RecordedFindings.isRecorded(2, $0) }, "checked after the commit")
        #expect(try database.read { try Int.fetchOne($0, sql: "PRAGMA cache_size") } == cacheBefore)
        #expect(cacheBefore != -tuning.checksAfterCommitCacheKiB)
    }

    /// Another process commits a version between the import's commit and its checks: that
    /// version's own checks recorded the findings (from the history, finding none recorded for
    /// the import's); the import leaves them as they are and says its checks were not made.
    @Test func aVersionCommittedInBetweenKeepsItsOwnFindings() throws {
        var (database, next, tuning) = try baseAndNext()
        let path = database.path
        tuning.afterCommit = {
            let other = try MasterDatabase.open(at: path)
            try Curator(other).apply([LocatedOperation(.edit(table: .stations, key: ["1120102"], values: ["station_name": "テスト"]))], memo: "meanwhile")
        }
        let report = try Importer(database, tuning: tuning).importSnapshot([next], options: Self.massClose)
        #expect(report.committed && report.version == 2)
        #expect(report.warnings.contains {
            $0.hasPrefix("version 2 is committed, but another version was committed before its checks ran: its findings (see them: ")
                && $0.contains("check --version 2") && $0.hasSuffix("were not made")
        }, "\(report.warnings)")
        #expect(report.totalFindings == 0, "no findings are claimed for a version not checked")
        #expect(try database.dataVersion() == 3)
        #expect(try recorded(database) == Set(try Checker(database).check().findings.map(\.identity)))
        #expect(try database.read { try Int.fetchOne($0, sql: "PRAGMA wal_autocheckpoint") } == 1000)
    }
}
