import Foundation
import GRDB
import StationCheck
import StationCurate
import StationImport
import StationRelease
import StationSchema
import StationSupport
import StationSynth
import Testing

/// Each rule on the base fixture: one change that makes exactly the findings listed, and the
/// base itself (or a limit just above the case) as the clean case.
@Suite struct CheckRuleTests {
    let scratch = Scratch()

    struct Case: CustomTestStringConvertible, Sendable {
        let rule: CheckRule
        let operations: [PlanOperation]
        /// `rule table key` of every finding the change brings, in check's order.
        let expected: [String]
        var testDescription: String { rule.rawValue }
    }

    static let cases: [Case] = [
        Case(rule: .openUnderClosed,
             operations: [.edit(table: .companies, key: ["99"], values: ["e_status": "2"])],
             expected: ["open-under-closed lines 99001"]),
        Case(rule: .openUnderClosed,
             operations: [.edit(table: .lines, key: ["11202"], values: ["e_status": "2"])],
             expected: (1...6).map { "open-under-closed stations 112020\($0)" }),
        Case(rule: .datesOutOfOrder,
             operations: [.edit(table: .stations, key: ["1120102"], values: ["open_ymd": "2020-01-01", "close_ymd": "2019-12-31"])],
             expected: ["dates-out-of-order stations 1120102"]),
        Case(rule: .coordinatesOutsideJapan,
             operations: [.edit(table: .lines, key: ["99001"], values: ["lon": "160.5"])],
             expected: ["coordinates-outside-japan lines 99001"]),
        Case(rule: .closedWithoutDate,
             operations: [.close(table: .stations, key: ["9900107"], date: nil, cascade: false)],
             expected: ["closed-without-date stations 9900107", "connection-to-closed-station connections 99001/9900105/9900107"]),
        Case(rule: .connectionTooLong,
             operations: [.connect(line: 11201, stations: [1120101, 1120120])],
             expected: ["connection-too-long connections 11201/1120101/1120120"]),
        // A station moved to another line and its connections left behind.
        Case(rule: .connectionOffItsLine,
             operations: [.edit(table: .stations, key: ["9900105"], values: ["line_cd": "11201"])],
             expected: ["connection-off-its-line connections 99001/9900104/9900105", "connection-off-its-line connections 99001/9900105/9900107"]),
        Case(rule: .stationMovedFar,
             operations: [.edit(table: .stations, key: ["9900104"], values: ["lat": "35.641"])],
             expected: ["station-moved-far stations 9900104"]),
        // Beyond 50 km a move is a typo, an error; the short move beside it stays a warning.
        Case(rule: .stationMovedImplausibly,
             operations: [.edit(table: .stations, key: ["9900104"], values: ["lat": "20.1"]),
                          .edit(table: .stations, key: ["9900103"], values: ["lat": "35.70"])],
             expected: ["station-moved-implausibly stations 9900104", "connection-too-long connections 99001/9900103/9900104",
                        "connection-too-long connections 99001/9900104/9900105", "station-moved-far stations 9900103"]),
        Case(rule: .kanaNotKatakana,
             operations: [.edit(table: .stations, key: ["1120101"], values: ["station_name_k": "ハチノヘ駅"]),
                          .edit(table: .stations, key: ["1120201"], values: ["station_name_k": "ハチノヘ・ハチノヘセン ー"])],
             expected: ["kana-not-katakana stations 1120101"]),
        Case(rule: .groupDangling,
             operations: [.edit(table: .stations, key: ["1120102"], values: ["station_g_cd": "1999999"])],
             expected: ["group-dangling stations 1120102"]),
        Case(rule: .duplicateNameOnLine,
             operations: [.edit(table: .stations, key: ["9900105"], values: ["station_name": "テスト南"])],
             expected: ["duplicate-name-on-line stations 9900105"]),
        Case(rule: .lineWithoutStations,
             operations: [.add(table: .lines, values: ["line_cd": "99002", "company_cd": "99", "line_name": "テスト支線", "e_status": "0"])],
             expected: ["line-without-stations lines 99002"]),
    ]

    private func summary(_ findings: [CheckFinding]) -> [String] { findings.map { "\($0.rule.rawValue) \($0.table) \($0.key)" } }

    @Test func theBaseFixtureIsClean() throws {
        let database = try scratch.baseDatabase()
        #expect(try Checker(database).check().findings.isEmpty)
    }

    @Test(arguments: cases) func eachRuleFindsItsCase(_ testCase: Case) throws {
        let database = try scratch.baseDatabase()
        let report = try Curator(database).apply(testCase.operations.map { LocatedOperation($0) }, memo: testCase.rule.rawValue)
        let check = try Checker(database).check()
        #expect(summary(check.findings) == testCase.expected)
        #expect(check.findings.allSatisfy { $0.severity == $0.rule.severity && !$0.waived })
        // The version's report ends with what it introduced: here, everything.
        #expect(summary(report.findings) == testCase.expected)
        // The version before is clean: check reads a past version from the history.
        #expect(try Checker(database).check(version: 1).findings.isEmpty)
        let errors = testCase.expected.filter { CheckRule(rawValue: String($0.prefix { $0 != " " }))!.severity == .error }
        #expect(check.blocking.count == errors.count)
    }

    @Test func findingsSayWhatIsWrongWithTheValuesAndHowToFixIt() throws {
        let database = try scratch.baseDatabase()
        try Curator(database).apply([
            LocatedOperation(.edit(table: .stations, key: ["1120102"], values: ["open_ymd": "2020-01-01", "close_ymd": "2019-12-31"])),
            LocatedOperation(.connect(line: 11201, stations: [1120101, 1120120])),
        ])
        #expect(try Checker(database).check().findings.map(\.line) == [
            "stations 1120102: dates-out-of-order: 陸奥市川 opens after it closes (open_ymd 2020-01-01, close_ymd 2019-12-31; "
                + "correct one: station-admin edit stations 1120102 close_ymd=YYYY-MM-DD)",
            "connections 11201/1120101/1120120: connection-too-long: JR東北本線(八戸～青森): 八戸 – 青森 is 69.1 km long (limit 50 km; "
                + "if they are not neighbours: station-admin disconnect 11201 1120101 1120120; a real long edge, such as a tunnel under a strait: waive it)",
        ])
    }

    /// A distance just over its limit reads as over it: 1.03 km against 1 km, never "1.0 km".
    @Test func aDistanceJustOverItsLimitReadsAsOverIt() throws {
        let database = try scratch.baseDatabase()
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["9900104"], values: ["lat": "35.639452"]))])
        let lines = try Checker(database).check().findings.map(\.line).filter { $0.contains("station-moved-far") }
        #expect(lines.count == 1 && lines[0].contains("テスト南 moved 1.03 km in version 2") && lines[0].contains("; limit 1 km;"), "\(lines)")
    }

    /// Names repeat per line, among open stations only: the second and third 陸奥市川 of line 11201
    /// both name the first, a closed one and the 八戸 of another line do not count. A closed
    /// station's connections name both ends by name (names are read only for findings). Rules come in their fixed order.
    @Test func duplicateNamesAndClosedEndsAreFoundPerLine() throws {
        let database = try scratch.baseDatabase()
        try Curator(database).apply([
            LocatedOperation(.edit(table: .stations, key: ["1120105"], values: ["station_name": "陸奥市川"])),
            LocatedOperation(.edit(table: .stations, key: ["1120103"], values: ["station_name": "陸奥市川"])),
            LocatedOperation(.edit(table: .stations, key: ["1120107"], values: ["station_name": "陸奥市川"])),
            LocatedOperation(.close(table: .stations, key: ["1120107"], date: "2020-03-14", cascade: false)),
        ])
        let lines = try Checker(database).check().findings.map(\.line)
        #expect(lines == [
            "stations 1120103: duplicate-name-on-line: 陸奥市川 is the second open station of that name on line 11201 (the first is 1120102; "
                + "close the one that is wrong: station-admin close stations 1120103; or rename it)",
            "stations 1120105: duplicate-name-on-line: 陸奥市川 is the second open station of that name on line 11201 (the first is 1120102; "
                + "close the one that is wrong: station-admin close stations 1120105; or rename it)",
            "connections 11201/1120106/1120107: connection-to-closed-station: open line JR東北本線(八戸～青森): 小川原 – 陸奥市川 runs to closed 1120107 陸奥市川 "
                + "(remove it: station-admin disconnect 11201 1120106 1120107; or restore the station)",
            "connections 11201/1120107/1120108: connection-to-closed-station: open line JR東北本線(八戸～青森): 陸奥市川 – 乙供 runs to closed 1120107 陸奥市川 "
                + "(remove it: station-admin disconnect 11201 1120107 1120108; or restore the station)",
        ], "\(lines.joined(separator: "\n"))")
        // Version 2 read back from the history once version 3 renamed and reopened everything.
        try Curator(database).apply([
            LocatedOperation(.edit(table: .stations, key: ["1120103"], values: ["station_name": "下田"])),
            LocatedOperation(.edit(table: .stations, key: ["1120105"], values: ["station_name": "三沢"])),
            LocatedOperation(.restore(table: .stations, key: ["1120107"])),
            LocatedOperation(.edit(table: .stations, key: ["1120107"], values: ["station_name": "上北町"])),
        ])
        #expect(try Checker(database).check().findings.isEmpty)
        #expect(try Checker(database).check(version: 2).findings.map(\.line) == lines)
    }

    /// A version's report names only the findings it brings: the version before's are read from
    /// the set recorded at its commit, or, for a master without one, rebuilt from the history.
    @Test func aReportNamesOnlyTheFindingsItsVersionBrings() throws {
        let database = try scratch.baseDatabase()
        let first = try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1120102"], values: ["station_g_cd": "1999999"]))])
        #expect(summary(first.findings) == ["group-dangling stations 1120102"])
        let second = try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1120103"], values: ["station_g_cd": "1999998"]))])
        #expect(summary(second.findings) == ["group-dangling stations 1120103"])
        // A master whose set was not recorded (an older StationAdmin wrote it): the same answer.
        let queue = try DatabaseQueue(path: database.path)
        try queue.write { try $0.execute(sql: "DELETE FROM recorded_findings; DELETE FROM recorded_findings_version") }
        try queue.close()
        let third = try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1120104"], values: ["station_g_cd": "1999997"]))])
        #expect(summary(third.findings) == ["group-dangling stations 1120104"])
        #expect(summary(try Checker(database).check().findings).count == 3)
    }

    @Test func limitsAreOptions() throws {
        let database = try scratch.baseDatabase()
        try Curator(database).apply([
            LocatedOperation(.connect(line: 11201, stations: [1120101, 1120120])),
            LocatedOperation(.edit(table: .stations, key: ["9900104"], values: ["lat": "35.641"])),
        ])
        #expect(summary(try Checker(database).check().findings) == [
            "connection-too-long connections 11201/1120101/1120120", "station-moved-far stations 9900104",
        ])
        #expect(try Checker(database).check(limits: CheckLimits(connectionKilometres: 70, moveKilometres: 1.5)).findings.isEmpty)
        // A move is judged in the version that made it, not later.
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["9900101"], values: ["weight": "3"]))])
        #expect(summary(try Checker(database).check().findings) == ["connection-too-long connections 11201/1120101/1120120"])
        #expect(summary(try Checker(database).check(version: 2).findings).contains("station-moved-far stations 9900104"))
    }

    @Test func aVersionReportsOnlyTheFindingsItIntroduces() throws {
        let database = try scratch.baseDatabase()
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["9900105"], values: ["station_name": "テスト南"]))])
        let next = try Curator(database).apply([
            LocatedOperation(.edit(table: .stations, key: ["1120102"], values: ["station_g_cd": "1999999"])),
        ])
        #expect(summary(next.findings) == ["group-dangling stations 1120102"])
        #expect(try Checker(database).check().findings.count == 2)
        // An import ends its report the same way.
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "1120103,1120103,下田,,", with: "1120103,1120103,下田,シモダ駅,")
        let imported = try Importer(database).importSnapshot([snapshot.path])
        #expect(summary(imported.findings) == ["kana-not-katakana stations 1120103"])
    }
}
