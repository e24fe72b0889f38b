import Foundation
import GRDB
import StationCurate
import StationImport
import StationLog
import StationRelease
import StationReview
import StationSchema
import StationSupport
import Testing

/// The client schema grows: a test-only change adds `station_name_en` to the stations (client
/// schema 2). Phones at every older data version, whose databases have schema 1, take their delta
/// on the real sqlite3 and end with the new bundled database's schema and content.
@Suite struct ClientSchemaChangeTests {
    let scratch = Scratch()

    static let stationNameEN = ClientSchemaChange(
        version: 2, id: "test-stationNameEN",
        columns: [(.stations, MasterTable.Column("station_name_en", .text, inCSV: false, limit: .name, since: 2))],
        indexes: ["CREATE INDEX stations_by_english_name ON stations (station_name_en)"])

    /// Versions 1 (the base fixture) and 2 under schema 1; then the change; versions 3 and 4 under schema 2.
    private func history() throws -> MasterDatabase {
        let database = try scratch.baseDatabase()
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["9900102"], values: ["weight": "3"]))])
        return database
    }

    /// What the binary with the change declares.
    static let schema2 = DeclaredSchema.shipped(plus: [stationNameEN])

    @Test func phonesOfEveryOlderVersionTakeTheNewColumnThroughTheirDelta() throws {
        let path = try history().path
        do {
            #expect(Self.schema2.clientSchema == 2)
            let database = try MasterDatabase.open(at: path, declared: Self.schema2)
            // The first write migrates the master: the column, its CHECK, its history twin.
            try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["9900101"], values: ["station_name_en": "Test Central"]))])
            try Curator(database).apply([
                LocatedOperation(.edit(table: .stations, key: ["1120101"], values: ["station_name_en": "Hachinohe", "weight": "2"])),
                LocatedOperation(.edit(table: .stations, key: ["9900103"], values: ["station_name": "テスト西口"])),
            ])
            #expect(throws: (any Error).self) {
                try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["9900104"], values: ["station_name_en": String(repeating: "x", count: 301)]))])
            }
            let schemas = try database.read { try Row.fetchAll($0, sql: "SELECT schema_version, first_data_version FROM client_schemas") }
            #expect(schemas.map { [$0[0] as Int, $0[1] as Int] } == [[2, 3]])

            let result = try Publisher(database).release(ReleaseOptions(outputFolder: scratch.path("release")))
            #expect(result.released.version == 4 && result.released.clientSchema == 2)
            // verify applied the deltas from 1, 2 and 3 with sqlite3 and compared schema and content.
            #expect(result.verification?.failures == [])
            #expect(result.verification?.deltasPassed == 3)

            // A schema-1 phone's delta begins by bringing its schema up; a schema-2 phone's does not.
            let fromOne = String(decoding: try Gunzip.read(scratch.path("release/4/delta-from-1.sql.gz")), as: UTF8.self)
            #expect(fromOne.contains("-- client schema 1 → 2\nALTER TABLE stations ADD COLUMN station_name_en TEXT;\nCREATE INDEX stations_by_english_name ON stations (station_name_en);\n"))
            #expect(fromOne.contains("UPDATE stations SET station_name_en = 'Test Central' WHERE station_cd = 9900101;"))
            let fromThree = String(decoding: try Gunzip.read(scratch.path("release/4/delta-from-3.sql.gz")), as: UTF8.self)
            #expect(!fromThree.contains("ALTER TABLE") && fromThree.contains("station_name_en = 'Hachinohe'"))

            // By hand, as a phone: version 2's database (schema 1), its delta, on the real sqlite3.
            let phone = scratch.path("phone-2.sqlite")
            _ = try Publisher(database).buildClientDatabase(version: 2, at: phone)
            let before = try DatabaseQueue(path: phone)
            #expect(try before.read { try ClientSchema.recordedVersion($0) } == 1)
            #expect(try before.read { db in try db.columns(in: "stations").map(\.name) }.contains("station_name_en") == false)
            try before.close()
            #expect(try scratch.apply(delta: scratch.path("release/4/delta-from-2.sql.gz"), to: phone).status == 0)
            let bundled = try DatabaseQueue(path: scratch.path("release/4/stations.sqlite"))
            let updated = try DatabaseQueue(path: phone)
            #expect(try updated.read { try ClientSchema.shape($0) } == (try bundled.read { try ClientSchema.shape($0) }))
            #expect(try updated.read { try ContentHash.compute($0, Self.schema2) } == result.released.contentHash)
            #expect(try updated.read { try String.fetchOne($0, sql: "SELECT station_name_en FROM stations WHERE station_cd = 9900101") } == "Test Central")
            // A phone's query on the new column uses its index, as on the bundled file.
            let plan = try updated.read { try Row.fetchAll($0, sql: "EXPLAIN QUERY PLAN SELECT * FROM stations WHERE station_name_en = 'x'") }
            #expect(plan.map { $0["detail"] as String }.joined().contains("stations_by_english_name"))
            try updated.close(); try bundled.close()

            // Re-releasing an old version builds it with the schema its phones have.
            let old = scratch.path("old-2.sqlite")
            _ = try Publisher(database).buildClientDatabase(version: 2, at: old)
            #expect(try DatabaseQueue(path: old).read { try $0.columns(in: "stations").map(\.name) }.contains("station_name_en") == false)
        }
    }

    /// A column no CSV carries is the curators': an import over its rows (a change of another
    /// column, a row closed for being absent, through the three-way merge) keeps it, the log
    /// tells its changes, and reverting the version that set it takes it back alone. Each step
    /// reads the table's columns from the schema the master was opened with.
    @Test func anImportKeepsTheNewColumnAndARevertTakesItBack() throws {
        let database = try MasterDatabase.open(at: try scratch.baseDatabase().path, declared: Self.schema2)
        try Curator(database).apply([
            LocatedOperation(.edit(table: .stations, key: ["9900101"], values: ["station_name_en": "Test Central"])),
            LocatedOperation(.edit(table: .stations, key: ["9900107"], values: ["station_name_en": "Test New"])),
        ])
        let snapshot = try scratch.snapshot()
        try snapshot.replace("station.csv", "9900101,9900101,テスト中央,", with: "9900101,9900101,テスト中央駅,")
        try snapshot.removeLine("station.csv", containing: "9900107,9900107")
        try snapshot.removeLine("join.csv", containing: "99001,9900105,9900107")
        #expect(try Importer(database).importSnapshot([snapshot.path], options: ImportOptions(allowMassClose: true)).committed)
        func english(_ code: Int) throws -> String? { try database.value("SELECT station_name_en FROM stations WHERE station_cd = ?", [code]) }
        #expect(try english(9900101) == "Test Central")
        #expect(try english(9900107) == "Test New")
        #expect(try database.value("SELECT e_status FROM stations WHERE station_cd = 9900107") == 2)
        #expect(try database.value("SELECT station_name_en FROM stations_history WHERE station_cd = 9900107 AND valid_to = 3") == "Test New")

        var told: [String] = []
        try LogReader(database).forEachDescribedUpdate(LogFilter(version: 2)) { entry in
            told += entry.change.fields.map { "\(entry.update.keyID) \($0.column) \($0.new ?? "NULL")" }
        }
        #expect(told == ["9900101 station_name_en Test Central", "9900107 station_name_en Test New"])

        #expect(try Curator(database).revert(version: 2).committed)
        #expect(try english(9900101) == nil && english(9900107) == nil)
        #expect(try database.value("SELECT station_name FROM stations WHERE station_cd = 9900101") == "テスト中央駅")
        #expect(try database.value("SELECT e_status FROM stations WHERE station_cd = 9900107") == 2)
    }
}
