import Foundation
import StationCSV
import StationSupport
import Testing

/// Reading a file's header: the first record and nothing after it, its names trimmed as Foundation would.
struct HeaderReadingTests {
    /// The header comes back even though line 3 is malformed: the reader stopped at the end of line 1.
    @Test func stopsAtTheEndOfTheFirstRecord() throws {
        let scratch = Scratch()
        let path = scratch.path("stations.csv")
        try Data("station_cd,station_name\n1,a\n2,\"b\"x\n".utf8).write(to: URL(fileURLWithPath: path))
        var header: [String] = []
        let found = try CSVReader(path: path, displayName: path).firstRecord { record in
            header = record.fields.map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(found)
        #expect(header == ["station_cd", "station_name"])
        #expect(throws: InputError.self) { try CSVReader(path: path, displayName: path).forEachRecord { _ in } }
    }

    /// A file whose lines end in CR alone is one line to the reader, holding every record: the header is still the first.
    @Test func theFirstOfSeveralRecordsOnOneLine() throws {
        let scratch = Scratch()
        let path = scratch.path("stations.csv")
        try Data("station_cd,station_name\r1,a\r2,b\r".utf8).write(to: URL(fileURLWithPath: path))
        var headers: [[String]] = []
        _ = try CSVReader(path: path, displayName: path).firstRecord { record in
            headers.append(record.fields.map { String(decoding: $0, as: UTF8.self) })
        }
        #expect(headers == [["station_cd", "station_name"]])
    }

    /// Blank records before the header (`""` alone on a line reads as one empty field) are
    /// skipped, as the reading of the rows skips them: the header is the first record with text.
    @Test func blankRecordsBeforeTheHeaderAreSkipped() throws {
        let scratch = Scratch()
        let path = scratch.path("stations.csv")
        try Data("\"\"\n  \n\nstation_cd,station_name\n1,a\n".utf8).write(to: URL(fileURLWithPath: path))
        var headers: [[String]] = []
        let found = try CSVReader(path: path, displayName: path).firstRecord { record in
            headers.append(record.fields.map { String(decoding: $0, as: UTF8.self) })
        }
        #expect(found)
        #expect(headers == [["station_cd", "station_name"]])
    }

    @Test func anEmptyFileHasNoFirstRecord() throws {
        let scratch = Scratch()
        let path = scratch.path("empty.csv")
        try Data().write(to: URL(fileURLWithPath: path))
        #expect(try !CSVReader(path: path, displayName: path).firstRecord { _ in })
    }

    /// Every Unicode scalar, alone and around a name: trimmed exactly when Foundation's
    /// `.whitespaces` holds it (tabs, space separators, and the zero-width space).
    @Test func everyScalarTrimmedAsFoundationDoes() {
        var differing: [UInt32] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "\(scalar)駅\(scalar)"
            if TableHeader.trimmingBlanks(text) != text.trimmingCharacters(in: .whitespaces) { differing.append(value) }
        }
        #expect(differing.isEmpty, "\(differing.prefix(10).map { String($0, radix: 16) })")
    }

    /// Tabs and Unicode space separators (U+3000, U+00A0) go from both ends; newlines and the
    /// blanks inside stay, as with `trimmingCharacters(in: .whitespaces)`.
    @Test(arguments: [
        "", " ", "\t", "station_cd", " station_cd ", "\tline_cd\t", "\u{3000}駅名\u{3000}", "\u{A0}a b\u{A0}", "\na\n",
        "\u{200B}a\u{200B}", " \u{301}a", "a\u{2003}", "\u{2003}\u{3000} \t", "e\u{301} ", "\r\nx",
    ])
    func blanksTrimmedAsFoundationDoes(text: String) {
        #expect(TableHeader.trimmingBlanks(text) == text.trimmingCharacters(in: .whitespaces))
    }
}
