import Foundation
import GRDB
import StationCheck
import StationCurate
import StationImport
import StationLog
import StationRelease
import StationReview
import StationSchema
import StationSupport
import StationSynth
import StationWeights
import Testing

/// The master's schema agrees with `MasterTable`, each column's domain is a CHECK that SQLite
/// enforces, and the migration that brought the CHECKs keeps a row already outside its domain
/// for `check` to report.
@Suite struct MasterSchemaTests {
    let scratch = Scratch()

    @Test func theFrozenMigrationIsTheDeclarationsSQL() {
        for table in MasterTable.all {
            #expect(MasterSchema.domainCheckedTables.contains(table.createStatement(named: table.name + "_checked") + ";"),
                    "\(table.name): the checkDomains migration no longer matches MasterTable; add a migration")
        }
    }

    @Test func aNewMastersTablesHaveTheDeclaredColumnsTypesAndChecks() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try database.read { db in
            for table in MasterTable.all {
                let columns = try Row.fetchAll(db, sql: "PRAGMA table_info(\(table.name))").map { "\($0["name"] as String) \($0["type"] as String)" }
                #expect(columns == table.columns.map { "\($0.name) \($0.sqlType)" })
                let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = ?", arguments: [table.name])!
                for column in table.columns {
                    if let check = column.domainCheck { #expect(sql.contains("\(column.name) \(column.sqlType)") && sql.contains("CHECK (\(check))")) }
                }
            }
            #expect(try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'stations_on_line'") != nil)
        }
    }

    /// One rule for "the same place": the import's diff, the change report and the review page
    /// share it (the review's used to call two coordinates exactly the tolerance apart equal).
    @Test func coordinatesAreTheSamePlaceUnderOneRule() {
        #expect(MasterTable.isSameCoordinate(34.69796, 34.697960000000002))
        #expect(MasterTable.isSameCoordinate(35.0, 35.0 + 5e-7))
        #expect(!MasterTable.isSameCoordinate(35.0, 35.00001))
        let kind = MasterTable.latitude
        #expect(!FieldChange.differ(35.0.databaseValue, (35.0 + 5e-7).databaseValue, kind))
        #expect(FieldChange.differ(35.0.databaseValue, 35.00001.databaseValue, kind))
    }

    @Test func anIntegerDomainsSQLRangesAreTheValuesItContains() {
        let domains: [MasterTable.IntegerDomain] = [.code, .status, .prefecture, .prefectureRow, .weight]
        for domain in domains {
            for value in Array(-3...120) + [Int64(Int32.max) - 1, Int64(Int32.max), Int64(Int32.max) + 1, .min, .max] {
                #expect(domain.contains(value) == domain.ranges.contains { $0.contains(value) }, "\(domain) \(value)")
            }
        }
    }

    /// A value one step outside each column's domain: what SQLite itself must refuse.
    private static func outsideValues(_ column: MasterTable.Column) -> [DatabaseValue] {
        switch column.kind {
        case .integer:
            guard let ranges = column.domain?.ranges else { return [] }
            var values: [Int64] = [ranges[0].lowerBound - 1, ranges[ranges.count - 1].upperBound + 1]
            for (range, next) in zip(ranges, ranges.dropFirst()) where range.upperBound + 1 < next.lowerBound { values.append(range.upperBound + 1) }
            return values.map(\.databaseValue)
        case .coordinate(let range): return [(range.upperBound + 0.5).databaseValue, (range.lowerBound - 0.5).databaseValue]
        case .real: return []
        case .text:
            return (column.isRequired ? ["".databaseValue] : []) + [String(repeating: "あ", count: column.textLimit!.rawValue / 3 + 1).databaseValue]
        case .date: return ["2021-02-30", "2021/03/12", "2021-3-1", "0000-00-00", "2021-03-12 10:00"].map(\.databaseValue)
        }
    }

    @Test func sqliteRefusesEveryValueOutsideItsColumnsDomain() throws {
        let database = try scratch.baseDatabase()
        let queue = try DatabaseQueue(path: database.path)
        var refused = 0
        for table in MasterTable.all {
            let firstRow = "(\(table.keyOrder)) IN (SELECT \(table.keyOrder) FROM \(table.name) ORDER BY \(table.keyOrder) LIMIT 1)"
            for column in table.columns {
                for value in Self.outsideValues(column) {
                    #expect(throws: DatabaseError.self, "\(table.name).\(column.name) = \(value)") {
                        try queue.write { db in
                            try db.execute(sql: "UPDATE \(table.name) SET \(column.name) = ? WHERE \(firstRow)", arguments: [value])
                            #expect(db.changesCount == 1)
                        }
                    }
                    refused += 1
                }
            }
        }
        #expect(refused >= 60)
        // Values at the edges of the domains pass.
        try queue.inTransaction { db in
            try db.execute(sql: "UPDATE stations SET weight = 9, pref_cd = 47, lat = 90, open_ymd = '2024-02-29', e_status = 2 WHERE station_cd = 9900101")
            try db.execute(sql: "UPDATE prefectures SET pref_cd = 99 WHERE pref_cd = 13")
            return .rollback
        }
    }

    /// The counts each version keeps (`version_counts`) are the log's, by table and kind, splits
    /// under stations: after imports, a plan with splits, weights and a closure; and a master made
    /// before they were kept gets them from its log when it next migrates.
    @Test func theCountsKeptPerVersionAreTheLogs() throws {
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2019], options: ImportOptions(memo: "2019"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021], options: ImportOptions(memo: "2021"))
        try Curator(database).apply(planAt: Fixtures.repository.appendingPathComponent("datasets/plans/2024-03-16-hokuriku.jsonl").path)
        _ = try Weigher(database).assignWeights(seed: 1, proposeMajor: true, memo: nil, dryRun: false)
        // The same column names, so that rows compare by their values.
        let counted = """
            SELECT user_version AS version, CASE WHEN type = 'DUPLICATE' THEN 'stations' ELSE table_name END AS table_name,
                   type, COUNT(*) AS count
            FROM updates GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
            """
        let kept = "SELECT version, table_name, type, count FROM version_counts ORDER BY 1, 2, 3"
        let log = try database.read { try Row.fetchAll($0, sql: counted) }
        #expect(log.count > 8)
        #expect(log.contains { $0[2] == "DUPLICATE" })
        #expect(try database.read { try Row.fetchAll($0, sql: kept) } == log)
        #expect(try LogReader(database).versions().sorted { $0.version < $1.version }.map(\.changes) == log.reduce(into: [Int: Int]()) { $0[$1[0], default: 0] += $1[3] }.sorted { $0.key < $1.key }.map(\.value))

        let queue = try DatabaseQueue(path: database.path)
        try queue.write { try $0.execute(sql: "DROP TABLE version_counts; DELETE FROM grdb_migrations WHERE identifier = 'keepVersionCounts'") }
        try queue.close()
        let reopened = try MasterDatabase.open(at: database.path)
        try Curator(reopened).apply([LocatedOperation(.edit(table: .stations, key: ["1130101"], values: ["weight": "3"]))], memo: "migrates")
        let after = try reopened.read { try Row.fetchAll($0, sql: counted) }
        #expect(after.count == log.count + 1)
        #expect(try reopened.read { try Row.fetchAll($0, sql: kept) } == after)
    }

    /// A master made before the CHECKs, with a weight 0 written then: the migration keeps the row
    /// as it is, `check` reports it as an error with the fix, a release is refused until it is
    /// mended, and from then on SQLite refuses the value.
    @Test func theMigrationKeepsARowOutsideItsDomainAndCheckReportsIt() throws {
        let database = try scratch.baseDatabase()
        let queue = try DatabaseQueue(path: database.path)
        let old = MasterSchema.createMasterTables
        // Each master table made again by its old statement, as the first migration made it (a
        // rename would leave SQLite's quoted name in its text, which no migration wrote).
        let rebuilt = MasterTable.all.map(\.name).map { table -> String in
            let from = String(old[old.range(of: "CREATE TABLE \(table) (")!.lowerBound...])
            return """
                CREATE TABLE \(table)_copy AS SELECT * FROM \(table);
                DROP TABLE \(table);
                \(from[..<from.range(of: #"\)( WITHOUT ROWID)?;"#, options: .regularExpression)!.upperBound])
                INSERT INTO \(table) SELECT * FROM \(table)_copy;
                DROP TABLE \(table)_copy;
                """
        }.joined(separator: "\n")
        try queue.write { db in
            try db.execute(sql: """
                \(rebuilt)
                CREATE INDEX stations_on_line ON stations(line_cd);
                UPDATE stations SET weight = 0 WHERE station_cd = 9900101;
                DELETE FROM grdb_migrations WHERE identifier = 'checkDomains';
                """)
        }
        try queue.close()
        // The next write migrates: it edits another station.
        let reopened = try MasterDatabase.open(at: database.path)
        try Curator(reopened).apply([LocatedOperation(.edit(table: .stations, key: ["9900102"], values: ["weight": "3"]))])
        let finding = "stations 9900101: value-outside-domain: weight 0 (expected \(MapWeight.expectation)); mend it: station-admin edit stations 9900101 weight=…"
        #expect(try Checker(reopened).check().findings.map(\.line).contains(finding))
        #expect(try Checker(reopened).releaseReadiness().unwaivedErrors == 1)
        // A version checked in its scope, which reads no unchanged station's domain, carries the
        // finding forward.
        let scoped = try Curator(reopened).apply([LocatedOperation(.edit(table: .stations, key: ["9900102"], values: ["weight": "4"]))])
        #expect(try reopened.read { try RecordedFindings.identities($0, version: scoped.version) }?
            .contains(FindingIdentity(rule: CheckRule.valueOutsideDomain.rawValue, table: "stations", key: "9900101")) == true)
        #expect(try Checker(reopened).releaseReadiness().unwaivedErrors == 1)
        #expect(try reopened.read { try Int.fetchOne($0, sql: "SELECT weight FROM stations WHERE station_cd = 9900101") } == 0, "the row is kept")
        let check = try CommandRunner.run(["check", "--db", database.path])
        #expect(check.status == 1 && check.stdout.contains(finding), "\(check.stdout)")
        #expect(throws: ReleaseError.self) { try Publisher(reopened).release(ReleaseOptions(outputFolder: scratch.path("release"))) }
        // Mended, it is gone; and SQLite now refuses the value.
        try Curator(reopened).apply([LocatedOperation(.edit(table: .stations, key: ["9900101"], values: ["weight": "13"]))])
        #expect(try !Checker(reopened).check().findings.contains { $0.rule == .valueOutsideDomain })
        #expect(throws: DatabaseError.self) {
            try reopened.queue.write { try $0.execute(sql: "UPDATE stations SET weight = 0 WHERE station_cd = 9900101") }
        }
    }
}
