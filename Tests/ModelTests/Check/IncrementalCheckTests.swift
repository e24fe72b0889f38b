import Foundation
import GRDB
import StationCheck
import StationCurate
import StationImport
import StationLog
import StationRelease
import StationSchema
import StationSupport
import StationSynth
import StationVersion
import StationWeights
import Testing

/// An import or plan checks only the rows its version can have changed (`CheckScope`) and
/// carries the rest of the findings forward. Over random curated histories aimed at every rule,
/// each version's carried-forward set must equal a full check of that version, and the
/// findings its report calls introduced must be exactly those a full check of it has and a
/// full check of the version before has not. And a past version, rebuilt from the history,
/// must be checked to exactly what a full check found when it was the newest.
@Suite(.tags(.slow), .leftOutOfQuickRuns) struct IncrementalCheckTests {
    static let histories = 48
    static let chunks = 4
    static let versionsPerHistory = 14

    @Test(arguments: 0..<chunks)
    func carriedForwardFindingsEqualAFullCheck(chunk: Int) throws {
        let perChunk = Self.histories / Self.chunks
        var ruleCounts: [CheckRule: Int] = [:]
        for seed in (chunk * perChunk)..<((chunk + 1) * perChunk) {
            for (rule, count) in try checkHistory(seed: UInt64(seed)) { ruleCounts[rule, default: 0] += count }
        }
        // The histories must reach every rule the checker has, or they prove nothing about it;
        // but value-outside-domain finds only rows written before the CHECKs, which no history can
        // write now (`MasterSchemaTests` makes one the way an old master had it); and
        // source-disagrees needs a second source's import, not a curated change: it is found
        // afresh whole in every scope (`CheckScope.foundAfresh`), and `SecondSourceTests` checks it.
        let unreached = CheckRule.allCases.filter { ruleCounts[$0, default: 0] == 0 && $0 != .valueOutsideDomain && $0 != .sourceDisagrees }
        #expect(unreached.isEmpty, "rules no history reached: \(unreached.map(\.rawValue))")
    }

    /// The same over chains of imports (`SnapshotSynthesizer.next`: renames, moves to another
    /// line, closures, new stations joined to their line, transferred lines, removed connections),
    /// whose scope takes the connections of the changed stations as a second connection read them
    /// before the version (`ImportChecks.readStateBefore`), not from the version written; and whose
    /// split suggestions, found from that connection's scan of the stations before, must be those
    /// `suggest` finds from the version committed. The same again with every version checked
    /// after its commit (`ImportTuning.checksAfterCommitFromStations`, a large import's way).
    @Test(arguments: [false, true])
    func importsCarryForwardFindingsEqualToAFullCheck(checkedAfterCommit: Bool) throws {
        var reached: Set<CheckRule> = []
        var suggested = 0
        for seed in UInt64(0)..<6 {
            let scratch = Scratch()
            let database = try scratch.baseDatabase()
            var before = Set(try Checker(database).check().findings.map(\.identity))
            var snapshot = Fixtures.base.path
            for generation in 1...6 {
                let next = scratch.path("next-\(generation)")
                try SnapshotSynthesizer.next(of: snapshot, changePercent: 25, seed: seed &* 100 &+ UInt64(generation), into: next)
                snapshot = next
                var tuning = ImportTuning()
                tuning.checksAfterCommitFromStations = checkedAfterCommit ? 0 : .max
                let report = try Importer(database, tuning: tuning).importSnapshot([next], options: ImportOptions(allowMassClose: true))
                #expect(report.warnings.allSatisfy { !$0.contains("is committed, but") }, "\(report.warnings)")
                guard report.committed else { continue }
                let full = try Checker(database).check()
                let now = Set(full.findings.map(\.identity))
                let recorded = try database.read { db in try RecordedFindings.identities(db, version: report.version) }
                #expect(recorded == now, "seed \(seed) version \(report.version): carried forward \(diff(recorded ?? [], now))")
                let introduced = IntroducedFindings(full.findings.filter { !before.contains($0.identity) })
                #expect(report.findingCounts == Dictionary(uniqueKeysWithValues: CheckRule.allCases.map { ($0.rawValue, introduced.counts[$0] ?? 0) }),
                        "seed \(seed) version \(report.version)")
                reached.formUnion(full.findings.map(\.rule))
                #expect(report.suggestions == (try Checker(database).suggestSplits(version: report.version)), "seed \(seed) version \(report.version)")
                suggested += report.suggestions.count
                before = now
            }
        }
        // A closed station's connections are in scope only through that list: the chains must close some.
        #expect(reached.contains(.connectionToClosedStation), "reached: \(reached.map(\.rawValue).sorted())")
        #expect(suggested > 0, "no import suggested a split")
    }

    /// Returns how many findings of each rule the history's versions had.
    private func checkHistory(seed: UInt64) throws -> [CheckRule: Int] {
        let scratch = Scratch()
        let database = try scratch.baseDatabase()
        var random = SplitMix64(seed: seed)
        var before = Set(try Checker(database).check().findings.map(\.identity))
        var ruleCounts: [CheckRule: Int] = [:]
        var committed = 1
        var attempts = 0
        var checkedWhenNewest: [Int: [String]] = [1: try Checker(database).check().findings.map(Self.describe)]
        while committed < Self.versionsPerHistory && attempts < 200 {
            attempts += 1
            let operations = try (0..<(1 + random.next() % 3)).map { _ in try randomOperation(database, &random) }
            let report: ChangeReport
            do {
                report = try Curator(database).apply(operations.map { LocatedOperation($0) }, memo: "seed \(seed)")
            } catch {
                continue  // an operation the master refuses (a closed station closed again): nothing was written
            }
            guard report.committed else { continue }
            committed += 1
            let full = try Checker(database).check()
            let now = Set(full.findings.map(\.identity))
            let recorded = try database.read { db in try RecordedFindings.identities(db, version: report.version) }
            #expect(recorded == now, "seed \(seed) version \(report.version): carried forward \(diff(recorded ?? [], now))")
            // Beside it, the version before's set, for the review of the newest version.
            let kept = try database.read { db in try RecordedFindings.identitiesBefore(db, version: report.version - 1) }
            #expect(kept == before, "seed \(seed) version \(report.version): kept as before \(diff(kept ?? [], before))")
            // The report counts every introduced finding and words the first of each rule.
            let introduced = full.findings.filter { !before.contains($0.identity) }
            let expected = IntroducedFindings(introduced)
            #expect(report.findingCounts == Dictionary(uniqueKeysWithValues: CheckRule.allCases.map { ($0.rawValue, expected.counts[$0] ?? 0) }),
                    "seed \(seed) version \(report.version): introduced \(diff(Set(report.findings.map(\.identity)), Set(introduced.map(\.identity))))")
            #expect(report.findings.map(Self.describe) == expected.first.map(Self.describe))
            for finding in full.findings { ruleCounts[finding.rule, default: 0] += 1 }
            checkedWhenNewest[report.version] = full.findings.map(Self.describe)
            before = now
        }
        let newest = try database.dataVersion()
        for (version, findings) in checkedWhenNewest where version < newest {
            #expect(try Checker(database).check(version: version).findings.map(Self.describe) == findings, "seed \(seed): version \(version) checked as a past version")
        }
        #expect(committed == Self.versionsPerHistory, "seed \(seed): only \(committed) versions in \(attempts) attempts")
        return ruleCounts
    }

    private static func describe(_ finding: CheckFinding) -> String {
        "\(finding.rule.rawValue) \(finding.table) \(finding.key): \(finding.message)"
    }

    private func diff(_ got: Set<FindingIdentity>, _ expected: Set<FindingIdentity>) -> String {
        let extra = got.subtracting(expected).map { "+\($0.rule) \($0.table) \($0.key)" }
        let missing = expected.subtracting(got).map { "-\($0.rule) \($0.table) \($0.key)" }
        return (extra + missing).sorted().joined(separator: ", ")
    }

    /// One curated operation on a random row, chosen so that every rule's findings come and go:
    /// names from a small pool (duplicates on a line), groups naming stations that come later,
    /// positions near, far and outside Japan, lines and companies closed under open rows.
    private func randomOperation(_ database: MasterDatabase, _ random: inout SplitMix64) throws -> PlanOperation {
        func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
        let (stations, lines, companies) = try database.read { db in
            (try Int64.fetchAll(db, sql: "SELECT station_cd FROM stations"),
             try Int64.fetchAll(db, sql: "SELECT line_cd FROM lines"),
             try Int64.fetchAll(db, sql: "SELECT company_cd FROM companies"))
        }
        let station = String(pick(stations)), line = pick(lines)
        // Codes that may be added later: a group naming one dangles until it is.
        let futureStation = String(8_800_000 + random.next() % 6)
        switch random.next() % 16 {
        case 0: return .edit(table: .stations, key: [station], values: ["station_name": pick(["テスト", "テスト南", "八戸", "本八戸"])])
        case 1: return .edit(table: .stations, key: [station], values: ["station_g_cd": pick([futureStation, String(pick(stations)), station])])
        case 2: return .edit(table: .stations, key: [station], values: ["lat": pick(["40.51", "40.52", "41.9", "10.5"]), "lon": pick(["141.49", "141.5", "142.8"])])
        case 3: return .edit(table: .stations, key: [station], values: ["open_ymd": pick(["2020-01-01", "1990-04-01"]), "close_ymd": pick(["2019-12-31", "2021-03-13"])])
        case 4: return .close(table: .stations, key: [station], date: pick([nil, "2021-03-13"]), cascade: false)
        case 5: return .restore(table: .stations, key: [station])
        case 6: return .edit(table: .lines, key: [String(line)], values: ["e_status": pick(["0", "2"])])
        case 7: return .edit(table: .companies, key: [String(pick(companies))], values: ["e_status": pick(["0", "2"])])
        case 8: return .moveStations(stations: [Int64(station)!], toLine: line)
        case 9: return .transferLine(line: line, toCompany: pick(companies))
        case 10: return .connect(line: line, stations: [pick(stations), pick(stations)])
        case 11:
            let connections = try database.read { db in try Row.fetchAll(db, sql: "SELECT line_cd, station_cd1, station_cd2 FROM connections") }
            let connection = pick(connections)
            return .disconnect(line: connection[0], stations: [connection[1], connection[2]])
        case 12:
            return .add(table: .stations, values: [
                "station_cd": futureStation, "station_g_cd": pick([futureStation, String(pick(stations))]),
                "station_name": pick(["テスト", "八戸", "新駅"]), "line_cd": String(line), "pref_cd": "2",
                "lat": pick(["40.5", "41.9"]), "lon": "141.5", "e_status": "0",
            ])
        case 13:
            return .add(table: .lines, values: ["line_cd": String(99_100 + random.next() % 4), "company_cd": String(pick(companies)),
                                               "line_name": "支線", "e_status": "0", "lat": pick(["40.5", "60.0"]), "lon": "141.5"])
        case 14: return .edit(table: .lines, key: [String(line)], values: ["lat": pick(["40.5", "60.0"]), "lon": "141.5"])
        default: return .edit(table: .stations, key: [station], values: pick([["address": "青森県八戸市\(random.next() % 100)"], ["station_name_k": pick(["ハチノヘ", "ハチノヘ駅"])]]))
        }
    }
}
