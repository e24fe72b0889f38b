import GRDB
import StationCurate
import StationHistory
import StationImport
import StationSchema
import Testing

/// A table's rows as they were at each past version, read from the current rows and the history.
@Suite struct VersionedStateTests {
    let scratch = Scratch()

    /// A station inserted at 1, renamed at 2 and 3, and a station added at 3: each version's
    /// state, from the SQL alone, equals what the master held when that version was committed.
    @Test func eachVersionsStateIsWhatTheMasterHeldThen() throws {
        let database = try MasterDatabase.create(at: scratch.path("m.sqlite"))
        try Importer(database).importSnapshot([Fixtures.base.path])
        var held: [Int: [String: String]] = [1: try names(database, version: nil)]
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1120102"], values: ["station_name": "二番"]))])
        held[2] = try names(database, version: nil)
        try Curator(database).apply([LocatedOperation(.edit(table: .stations, key: ["1120102"], values: ["station_name": "三番"])),
                            LocatedOperation(.add(table: .stations, values: ["station_cd": "1120199", "station_g_cd": "1120199",
                                                                            "station_name": "新駅", "line_cd": "11201", "pref_cd": "1", "e_status": "0"]))])
        held[3] = try names(database, version: nil)
        #expect(held[1]?["1120102"] != "二番" && held[2]?["1120102"] == "二番" && held[3]?["1120102"] == "三番")
        #expect(held[2]?["1120199"] == nil && held[3]?["1120199"] == "新駅")
        for version in 1...3 {
            #expect(try names(database, version: version) == held[version], "version \(version)")
        }
        #expect(try names(database, version: 0).isEmpty)
    }

    /// Station names by key at `version` (the newest: the current rows).
    private func names(_ database: MasterDatabase, version: Int?) throws -> [String: String] {
        let state = VersionedState(table: .stations, version: version ?? 0, isNewest: version == nil)
        return try database.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT key_id, station_name FROM (\(state.select()))").map {
                ($0["key_id"] as String, $0["station_name"] as String)
            })
        }
    }
}
