import Foundation
import StationSchema
import StationSupport

/// What a generated snapshot holds.
public struct SynthSummary: Codable, Sendable, Equatable {
    /// File name → data rows.
    public var rows: [String: Int]
    /// For a next snapshot: what was changed, by kind.
    public var changes: [String: Int]
}

/// Generates ekidata-shaped snapshots for tests and benchmarks: all five files, Japanese
/// names and addresses, coordinates inside Japan, a few quoted fields with commas; and a
/// "next snapshot" of any snapshot with a share of its stations changed. Deterministic: the
/// same arguments give the same bytes.
public enum SnapshotSynthesizer {
    package static let stationsPerLine = 17
    package static let stationHeader = ["station_cd", "station_g_cd", "station_name", "station_name_k", "station_name_r", "line_cd", "pref_cd",
                                "post", "address", "lon", "lat", "open_ymd", "close_ymd", "e_status", "e_sort"]
    package static let lineHeader = ["line_cd", "company_cd", "line_name", "line_name_k", "line_name_h", "line_color_c", "line_color_t",
                             "line_type", "lon", "lat", "zoom", "e_status", "e_sort"]
    package static let companyHeader = ["company_cd", "rr_cd", "company_name", "company_name_k", "company_name_h", "company_name_r",
                                "company_url", "company_type", "e_status", "e_sort"]

    /// Japan's extent from Yonaguni to Wakkanai: where a scattered station may be.
    private static let scatterLatitudes = 24.0...45.5, scatterLongitudes = 123.0...146.0

    /// Writes `company.csv`, `line.csv`, `station.csv`, `join.csv` and `pref.csv` for `stations` stations.
    ///
    /// - Parameters:
    ///   - stations: how many stations to write, on lines of `stationsPerLine`.
    ///   - seed: the random seed: the same arguments give the same bytes.
    ///   - scattered: each station's place uniform over Japan, with no line's stations near each
    ///     other, as a broken upstream export would give: nearly every connection is then too
    ///     long for `check` (about one finding per station). Off, a line runs its stations a few
    ///     hundred metres apart.
    ///   - folder: the folder to write, created if missing (an existing one must be empty).
    @discardableResult
    public static func generate(stations: Int, seed: UInt64, scattered: Bool = false, into folder: String) throws -> SynthSummary {
        precondition(stations > 0, "at least one station")
        defer { Progress.finish() }
        try prepareEmptyFolder(folder)
        func path(_ name: String) -> String { (folder as NSString).appendingPathComponent(name) }
        var random = SplitMix64(seed: seed)
        let lineCount = (stations + stationsPerLine - 1) / stationsPerLine
        let companyCount = max(3, lineCount / 40)
        Progress.phase("generating \(stations) stations", total: stations)

        try writePrefectures(to: path("pref.csv"))
        try writeCompanies(companyCount, to: path("company.csv"), random: &random)

        let lines = try CSVFileWriter(path: path("line.csv"))
        let stationFile = try CSVFileWriter(path: path("station.csv"))
        let joins = try CSVFileWriter(path: path("join.csv"))
        try lines.write(lineHeader)
        try stationFile.write(stationHeader)
        try joins.write(["line_cd", "station_cd1", "station_cd2"])
        let shares = SynthVocabulary.regions.flatMap { region in Array(repeating: region, count: region.share) }
        var written = 0
        for line in 0..<lineCount {
            let lineCode = 10_000 + line
            let region = shares[random.below(shares.count)]
            var latitude = region.south + random.unit() * (region.north - region.south)
            var longitude = region.west + random.unit() * (region.east - region.west)
            let heading = random.unit() * 2 * Double.pi
            let count = min(stationsPerLine, stations - written)
            try lines.write([String(lineCode), String(line % companyCount + 1), SynthVocabulary.name(&random) + "線", "", "", "", "", "",
                             SynthVocabulary.degrees(longitude), SynthVocabulary.degrees(latitude), "10", "0", String(lineCode)])
            var previous: Int?
            Progress.update(written)
            for index in 0..<count {
                let code = lineCode * 100 + index
                try stationFile.write(stationRow(code: code, lineCode: lineCode, prefectures: region.prefectures, linePlace: (latitude, longitude),
                                                 scattered: scattered, random: &random))
                if let previous { try joins.write([String(lineCode), String(previous), String(code)]) }
                previous = code
                latitude += cos(heading) * (0.005 + random.unit() * 0.015)
                longitude += sin(heading) * (0.005 + random.unit() * 0.015)
                written += 1
            }
        }
        try lines.finish()
        try stationFile.finish()
        try joins.finish()
        return SynthSummary(
            rows: ["pref.csv": 48, "company.csv": companyCount, "line.csv": lineCount, "station.csv": stations, "join.csv": stations - lineCount],
            changes: [:])
    }

    private static func writePrefectures(to path: String) throws {
        let prefectures = try CSVFileWriter(path: path)
        try prefectures.write(["pref_cd", "pref_name"])
        for (index, name) in SynthVocabulary.prefectures.enumerated() { try prefectures.write([String(index + 1), name]) }
        try prefectures.write(["99", "その他"])
        try prefectures.finish()
    }

    private static func writeCompanies(_ count: Int, to path: String, random: inout SplitMix64) throws {
        let companies = try CSVFileWriter(path: path)
        try companies.write(companyHeader)
        for company in 1...count {
            let name = SynthVocabulary.name(&random) + "鉄道"
            try companies.write([String(company), "99", name, "", name + "株式会社", name, company % 5 == 0 ? "https://example.jp/\(company)" : "",
                                 String(company % 4), "0", String(company)])
        }
        try companies.finish()
    }

    /// One station's row: on its line's place, or anywhere in Japan when `scattered`; its
    /// prefecture in the line's region, an address, sometimes an opening date, one in fifty closed.
    private static func stationRow(code: Int, lineCode: Int, prefectures: ClosedRange<Int>, linePlace: (latitude: Double, longitude: Double),
                                   scattered: Bool, random: inout SplitMix64) -> [String] {
        let prefecture = prefectures.lowerBound + random.below(prefectures.count)
        let city = SynthVocabulary.name(&random) + SynthVocabulary.cities[random.below(4)]
        var address = SynthVocabulary.prefectures[prefecture - 1] + city + SynthVocabulary.fullWidth(random.below(9) + 1) + "丁目"
        if random.below(200) == 0 { address += ", " + SynthVocabulary.name(&random) + "ビル" }
        let closed = random.below(50) == 0
        var place = linePlace
        if scattered {
            place = (scatterLatitudes.lowerBound + random.unit() * (scatterLatitudes.upperBound - scatterLatitudes.lowerBound),
                     scatterLongitudes.lowerBound + random.unit() * (scatterLongitudes.upperBound - scatterLongitudes.lowerBound))
        }
        return [
            String(code), String(code), SynthVocabulary.name(&random), "", "", String(lineCode), String(prefecture),
            SynthVocabulary.padded(random.below(1000), 3) + "-" + SynthVocabulary.padded(random.below(10000), 4), address,
            SynthVocabulary.degrees(place.longitude), SynthVocabulary.degrees(place.latitude),
            random.below(3) == 0 ? "19\(10 + random.below(90))-0\(random.below(9) + 1)-1\(random.below(10))" : "0000-00-00",
            closed ? "2001-03-31" : "0000-00-00", String(closed ? MasterTable.closedStatus : MasterTable.openStatus), String(code),
        ]
    }
}

/// `synth` writes only into a new or empty folder: generated data never overwrites real data.
public enum SynthError: Error, LocalizedError, Equatable {
    case folderNotEmpty(String, holds: [String])
    case notAFolder(String)
    case notUTF8(String, line: Int)

    public var errorDescription: String? {
        switch self {
        case let .folderNotEmpty(path, holds):
            let shown = holds.prefix(3).joined(separator: ", ") + (holds.count > 3 ? ", …" : "")
            return "\(path): the folder is not empty (it holds \(shown)); synth writes only into a new or empty folder, so choose another --out"
        case let .notAFolder(path):
            return "\(path): a file, not a folder (choose another --out)"
        case let .notUTF8(path, line):
            return "\(path):\(line): not valid UTF-8 (expected a snapshot that `\(CommandHint("import"))` accepts)"
        }
    }
}

/// Creates `folder`, or accepts it if it exists and is empty.
package func prepareEmptyFolder(_ folder: String) throws {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) {
        guard isDirectory.boolValue else { throw SynthError.notAFolder(folder) }
        let contents = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        if !contents.isEmpty { throw SynthError.folderNotEmpty(folder, holds: contents) }
    }
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
}
