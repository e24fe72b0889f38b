import GRDB
import StationImport
import StationSchema
import Testing

/// The connection warnings ask the master whether a code exists: by a search each while few
/// are asked, then from every code read at once. Both ways must answer as the table does.
@Suite struct MasterCodesTests {
    let scratch = Scratch()

    @Test(arguments: [0, 3, 10_000])
    func answersAsTheTableDoesWhicheverWayItAsks(searchesBeforeReading: Int) throws {
        let database = try scratch.baseDatabase()
        let (stations, lines) = try database.read { db in
            (Set(try Int64.fetchAll(db, sql: "SELECT station_cd FROM stations")), Set(try Int64.fetchAll(db, sql: "SELECT line_cd FROM lines")))
        }
        #expect(stations.count > 20 && lines.count > 2)
        // Codes the master has and codes it has not, each asked twice, across the switch to reading them all.
        let askedStations = (stations.sorted() + [1, 9_999_901, 1_120_205_000]).flatMap { [$0, $0] }
        let askedLines = (lines.sorted() + [0, 1002, 99_999]).flatMap { [$0, $0] }
        let (stationAnswers, lineAnswers) = try database.read { db in
            let stationCodes = try MasterCodes(db, table: .stations, searchesBeforeReading: searchesBeforeReading)
            let lineCodes = try MasterCodes(db, table: .lines, searchesBeforeReading: searchesBeforeReading)
            return (try askedStations.map { try stationCodes.contains($0) }, try askedLines.map { try lineCodes.contains($0) })
        }
        #expect(stationAnswers == askedStations.map(stations.contains))
        #expect(lineAnswers == askedLines.map(lines.contains))
        #expect(stationAnswers.contains(false) && lineAnswers.contains(false))
    }
}
