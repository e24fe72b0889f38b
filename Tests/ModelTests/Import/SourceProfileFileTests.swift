import Foundation
import GRDB
import StationCSV
import StationImport
import StationSchema
import StationSupport
import StationSynth
import Testing

/// A source the tool does not know, described by a file (`import --profile FILE`), and the
/// synthesizer's second source (`synth --source trainlcd`), imported over its primary.
@Suite struct SourceProfileFileTests {
    let scratch = Scratch()

    /// trainlcd's profile as a file would say it, under another name.
    static let trainlcdAsAFile = """
        {"name": "stationapi",
         "tables": {
           "companies": {"ignored": ["company_name_en", "company_name_full_en"]},
           "lines": {"ignored": ["line_name_r", "line_name_rn", "line_name_zh", "line_name_ko", "average_distance",
                                 \((1...4).flatMap { ["\"line_symbol\($0)\"", "\"line_symbol\($0)_color\"", "\"line_symbol\($0)_shape\""] }.joined(separator: ", "))],
                     "values": {"e_status": {"3": "0"}}, "normalized": {"line_color_c": {"without-leading": "#"}}},
           "stations": {"ignored": ["station_name_rn", "station_name_zh", "station_name_ko", "three_letter_code",
                                    "station_number1", "station_number2", "station_number3", "station_number4"],
                        "values": {"e_status": {"3": "0"}}, "normalized": {"address": "without-prefecture-name"}},
           "connections": {"ignored": ["id", "distance"], "pairs": "on-one-line"}}}
        """

    func write(_ text: String, _ name: String = "profile.json") throws -> String {
        let path = scratch.path(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func aProfileFileSaysWhatABuiltInProfileSays() throws {
        let profile = try SourceProfile.load(try write(Self.trainlcdAsAFile), .shipped)
        #expect(profile.name == "stationapi")
        #expect(profile.tables == SourceProfile.trainlcd.tables)

        // Imported with it, TrainLCD's June commit fills as --source trainlcd does, under the file's name.
        let database = try MasterDatabase.create(at: scratch.path("master.sqlite"))
        try Importer(database).importSnapshot([Fixtures.ekidata2021])
        var options = ImportOptions(describeLimit: 0)
        options.source = profile
        let report = try Importer(database).importSnapshot([SecondSourceTests.trainlcd2025June], options: options)
        #expect(report.counts["stations"]?["INSERT"] == 278)
        #expect(try SourceLedger(database).sources().map(\.name) == ["ekidata", "stationapi"])
    }

    @Test(arguments: [
        (#"{"name": "x", "tables": {"platforms": {}}}"#, "$.tables.platforms: not a table of the master (expected one of: prefectures, companies"),
        (#"{"name": "x", "tables": {"stations": {"ignored": ["station_name"]}}}"#,
         "$.tables.stations.ignored: \"station_name\" is a column of stations, so it is read"),
        (#"{"name": "x", "tables": {"stations": {"values": {"e_state": {"3": "0"}}}}}"#, "$.tables.stations.values: \"e_state\" is not a column of stations"),
        (#"{"name": "x", "tables": {"stations": {"values": {"e_status": {"3": 0}}}}}"#, "$.tables.stations.values.e_status: expected an object of a published value"),
        (#"{"name": "x", "tables": {"stations": {"normalized": {"address": "lowercase"}}}}"#, "$.tables.stations.normalized.address: expected \"without-prefecture-name\""),
        (#"{"name": "x", "tables": {"stations": {"pairs": "on-one-line"}}}"#, "$.tables.stations.pairs: expected \"on-one-line\", and only for connections"),
        (#"{"name": "x", "tables": {"stations": {"ignore": ["a"]}}}"#, "$.tables.stations.ignore: not a key of a source profile (expected: ignored, values, normalized, pairs"),
        (#"{"name": "trainlcd", "tables": {}}"#, "$.name: \"trainlcd\" is a source this StationAdmin knows"),
        (#"{"name": "x y", "tables": {}}"#, "$.name: expected the source's name"),
        (#"{"name": "x", "tables": {}, "name": "y"}"#, "\"name\" is named twice in $"),
        (#"[1, 2]"#, "not a JSON object"),
    ])
    func aProfileThatIsNotOneIsRefusedNamingTheKey(text: String, message: String) throws {
        let path = try write(text)
        let error = try #require(throws: InputError.self) { try SourceProfile.load(path, .shipped) }
        #expect(error.file == path)
        #expect(error.message.hasPrefix(message), "\(error.message)")
    }

    /// A million stations' second source is made this way (benchmarks/run); here at a few thousand,
    /// it fills every reading, adds its own stations joined to their line, and differs where it says it does.
    @Test func theSynthesizersSecondSourceFillsItsPrimary() throws {
        try SnapshotSynthesizer.generate(stations: 3_000, seed: 5, into: scratch.path("primary"))
        let summary = try SnapshotSynthesizer.secondSource(of: scratch.path("primary"), seed: 6, into: scratch.path("second"))
        let again = try SnapshotSynthesizer.secondSource(of: scratch.path("primary"), seed: 6, into: scratch.path("second-again"))
        #expect(summary == again)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("second")).sorted()
            == ["1!companies.csv", "2!lines.csv", "3!stations.csv", "8!connections.csv"])
        let added = try #require(summary.changes["station the base lacks"])
        let differing = try #require(summary.changes["value that differs"])
        #expect(added > 0 && differing > 0)

        let database = try MasterDatabase.create(at: scratch.path("synth.sqlite"))
        try Importer(database).importSnapshot([scratch.path("primary")])
        let largest = try database.read { try Int64.fetchOne($0, sql: "SELECT MAX(station_cd) FROM stations") ?? 0 }
        var options = ImportOptions(describeLimit: 0)
        options.source = .trainlcd
        let report = try Importer(database).importSnapshot([scratch.path("second")], options: options)
        #expect(report.counts["stations"]?["INSERT"] == added)
        func count(_ sql: String) throws -> Int { try database.read { try Int.fetchOne($0, sql: sql) ?? -1 } }
        #expect(try count("SELECT COUNT(*) FROM stations WHERE station_name_k IS NULL OR station_name_r IS NULL") == 0)
        // Each station it adds is joined to the station of its line it follows.
        #expect(try count("""
            SELECT COUNT(*) FROM stations s WHERE s.station_cd > \(largest)
            AND NOT EXISTS (SELECT 1 FROM connections c WHERE s.station_cd IN (c.station_cd1, c.station_cd2))
            """) == 0)
        #expect(try count("SELECT COUNT(*) FROM source_disagreements WHERE column_name = 'e_sort'") == differing)
    }
}
