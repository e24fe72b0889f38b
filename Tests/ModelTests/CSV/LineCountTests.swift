import Foundation
import StationCSV
import Testing

/// The estimate that sizes an import's table of keys, against the exact count.
struct LineCountTests {
    private func write(_ text: String) throws -> (Scratch, String) {
        let scratch = Scratch()
        let path = scratch.path("stations.csv")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return (scratch, path)
    }

    /// A file of less than 64 KiB is counted whole: the estimate is the count.
    @Test(arguments: ["", "station_cd\n", "station_cd\n1\n2", "a\nb\nc\n"])
    func exactForASmallFile(text: String) throws {
        let (scratch, path) = try write(text)
        #expect(ImportFile.estimatedLineCount(path) == ImportFile.lineCount(path))
        _ = scratch
    }

    /// The real 2021 stations file (1.4 MB) and a synthetic one of rows of growing length:
    /// within 10 % of the count, never below half of it.
    @Test func closeForALargeFile() throws {
        let real = Fixtures.ekidata2021 + "/station20210312free.csv"
        let exact = try #require(ImportFile.lineCount(real))
        let estimate = try #require(ImportFile.estimatedLineCount(real))
        #expect(abs(estimate - exact) * 10 <= exact, "\(estimate) against \(exact)")

        let rows = (0..<40_000).map { "\(1_000_000 + $0),\(String(repeating: "x", count: 20 + $0 / 2_000))" }
        let (scratch, path) = try write("station_cd,station_name\n" + rows.joined(separator: "\n") + "\n")
        let growing = try #require(ImportFile.estimatedLineCount(path))
        #expect(growing * 2 >= 40_001 && growing <= 40_001 * 2, "\(growing)")
        _ = scratch
    }
}
