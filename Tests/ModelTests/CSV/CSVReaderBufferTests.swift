import Foundation
import StationCSV
import Testing

/// The reader hands records over 256 at a time and keeps, between two hand-overs, the fields
/// of a record still being read: every field must come through whole, wherever a hand-over falls.
struct CSVReaderBufferTests {
    /// A header, then 800 records on 800 lines. Each even line ends one record at a CR and opens
    /// a quoted field that the next line closes: after the header, a hand-over (every 256
    /// records) falls after such a line and leaves half a record behind.
    @Test func aRecordStillBeingReadSurvivesTheHandOver() throws {
        let scratch = Scratch()
        let path = scratch.path("records.csv")
        var text = "code,name\n"
        for pair in 0..<400 {
            text += "\(2 * pair),a\(String(repeating: "b", count: pair % 13))\r\(2 * pair + 1),\"q\(pair)\n"
            text += "w\(String(repeating: "é", count: pair % 5))\"\n"
        }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        var records: [(line: Int, fields: [String])] = []
        try CSVReader(path: path, displayName: path).forEachRecord { record in
            records.append((record.line, (0..<record.fieldCount).map { String(decoding: record.field($0), as: UTF8.self) }))
        }
        #expect(records.count == 801)
        #expect(records.first?.fields == ["code", "name"])
        var wrong: [String] = []
        for (index, record) in records.dropFirst().map({ $0 }).enumerated() {
            let pair = index / 2
            let expected = index % 2 == 0
                ? ["\(index)", "a" + String(repeating: "b", count: pair % 13)]
                : ["\(index)", "q\(pair)\nw" + String(repeating: "é", count: pair % 5)]
            if record.fields != expected || record.line != 2 * pair + 2 { wrong.append("\(index): \(record)") }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
    }

    /// Fields of a million bytes and more, and many empty ones: the buffers grow past every doubling.
    @Test func longAndEmptyFields() throws {
        let scratch = Scratch()
        let path = scratch.path("long.csv")
        let long = String(repeating: "x", count: 1_500_000)
        try Data("a,,\(long),\n,,,\n\(long),\"\(long)\",b,\n".utf8).write(to: URL(fileURLWithPath: path))
        var records: [[Int]] = []
        try CSVReader(path: path, displayName: path).forEachRecord { record in
            records.append((0..<record.fieldCount).map { record.field($0).count })
        }
        #expect(records == [[1, 0, 1_500_000, 0], [0, 0, 0, 0], [1_500_000, 1_500_000, 1, 0]])
    }
}
