import Foundation
import StationCSV
import StationImport
import StationSchema
import StationSupport
import Testing

/// An import reads a large file in chunks of 2,048 records (`CSVReader.forEachChunk`), which
/// another thread than libcsv's may check (`ImportFile.forEachBatch`): a reader must see what
/// `forEachRecord` shows, record for record and error for error, wherever a chunk ends and
/// whichever thread checks it.
struct ChunkedReadingTests {
    /// What a reader delivered: each record's line and fields, then the error that ended it.
    struct Reading: Equatable {
        var records: [[String]] = []
        var error: String?
    }

    static func read(_ path: String, inChunks: Bool) -> Reading {
        var reading = Reading()
        let reader = CSVReader(path: path, displayName: "file.csv")
        let keep = { (record: CSVRecord) in
            reading.records.append(["\(record.line)"] + (0..<record.fieldCount).map { String(decoding: record.field($0), as: UTF8.self) })
        }
        do {
            if inChunks {
                try reader.forEachChunk(recordsPerChunk: ImportFile.batchSize, spare: { RecordChunk() }) { chunk in try chunk.forEach(keep) }
            } else {
                try reader.forEachRecord(keep)
            }
        } catch {
            reading.error = (error as? LocalizedError)?.errorDescription ?? "\(error)"
        }
        return reading
    }

    /// 10,000 records (five chunks), a byte-order mark, CRLF and LF line ends, blank lines,
    /// quoted fields that span two or three lines (some across a chunk's end, which falls after
    /// the 2,048th record finished on a line), quotes doubled inside, and a field of a megabyte.
    static func largeFile(endingWith tail: String = "") -> String {
        var text = "\u{FEFF}code,name,note\r\n"
        for index in 0..<10_000 {
            switch index % 7 {
            case 0: text += "\(index),\"two\nlines \(index)\",x\n"
            case 1: text += "\(index),plain,\"three\r\nlines\n\"\"q\"\"\"\r\n"
            case 2: text += "\n\(index),after a blank line,\n"
            case 3: text += "\(index),\"a,b\",\(index == 5_001 ? String(repeating: "m", count: 1 << 20) : "")\n"
            default: text += "\(index),駅\(index),\"\"\n"
            }
        }
        return text + tail
    }

    @Test(arguments: ["", "10000,\"never closed\n", "10000,a\"b,c\n10001,d,e\n"])
    func theSameRecordsAndErrorAsReadingRecordByRecord(tail: String) throws {
        let scratch = Scratch()
        let path = scratch.path("large.csv")
        try Data(Self.largeFile(endingWith: tail).utf8).write(to: URL(fileURLWithPath: path))
        let byRecord = Self.read(path, inChunks: false)
        let inChunks = Self.read(path, inChunks: true)
        #expect(byRecord.records.count == 10_001)
        #expect(byRecord.records[1] == ["2", "0", "two\nlines 0", "x"])
        #expect(byRecord.records[5_002][3].count == 1 << 20)
        #expect((byRecord.error == nil) == tail.isEmpty, "\(byRecord.error ?? "")")
        #expect(inChunks.records.count == byRecord.records.count)
        #expect(inChunks.records.indices.first { inChunks.records[$0] != byRecord.records[$0] } == nil)
        #expect(inChunks.error == byRecord.error)
    }

    /// Every file of the bad-input corpus (small: one chunk, or an error before any), and a file
    /// that is missing.
    @Test func theSameRecordsAndErrorsOnTheBadInputCorpus() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Fixtures.bad.path).filter { $0.hasSuffix(".csv") }.sorted()
        #expect(files.count >= 25)
        for path in files.map({ Fixtures.bad.appendingPathComponent($0).path }) + ["/nonexistent/stations.csv"] {
            #expect(Self.read(path, inChunks: true) == Self.read(path, inChunks: false), "\(path)")
        }
        #expect(Self.read("/nonexistent/stations.csv", inChunks: true).error?.hasPrefix("file.csv: cannot read") == true)
    }

    /// A stations file large enough to be read on a second thread (128 KiB and more): the base
    /// fixture's stations, then 3,000 more on one line, with bad rows where `bad` says.
    static func largeStationsFile(in scratch: Scratch, bad: Bool, endsMalformed: Bool = false) throws -> (path: String, lines: Int) {
        let base = try String(contentsOf: Fixtures.base.appendingPathComponent("station.csv"), encoding: .utf8)
        var lines = base.split(separator: "\n").map(String.init)
        for index in 0..<3_000 {
            let code = 5_000_000 + index
            lines.append("\(code),\(code),駅\(index),,,11201,2,039-1101,\"青森県八戸市尻内町\(index)番地, \"\"東\"\"\",141.430854,40.508877,1891-09-01,0000-00-00,0,\(code)")
        }
        if bad {
            lines[99] = lines[99].replacingOccurrences(of: "40.508877", with: "north")
            lines[2099] = lines[2099].replacingOccurrences(of: ",0000-00-00,0,", with: ",0000-00-00,")
            lines[2949] = lines[2949].replacingOccurrences(of: "1891-09-01", with: "2021-02-30")
        }
        if endsMalformed { lines.append("5999999,5999999,\"never closed,,,11201,2,,,141.4,40.5,,,0,1") }
        let path = scratch.path("station.csv")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
        #expect(FileChecks.size(path)! >= ImportFile.threadedFromBytes)
        return (path, lines.count)
    }

    /// The rows (line and fields) `forEachBatch` hands over, and the error it ends with.
    static func batches(of path: String, checking: ImportFile.RowCheckingThread) throws -> (rows: [String], error: String?) {
        let file = try #require(try ImportSource.files(from: [path], .shipped).first)
        var rows: [String] = []
        do {
            try file.forEachBatch(checking: checking) { batch in
                for row in 0..<batch.count { rows.append("\(batch.lines[row]): \(batch.fields[(row * file.header.columns.count)...].prefix(file.header.columns.count))") }
            }
        } catch {
            return (rows, (error as? LocalizedError)?.errorDescription ?? "\(error)")
        }
        return (rows, nil)
    }

    @Test(arguments: [(false, false), (true, false), (true, true)])
    func whicheverThreadChecksTheRowsTheyAreTheSame(bad: Bool, endsMalformed: Bool) throws {
        let scratch = Scratch()
        let (path, lineCount) = try Self.largeStationsFile(in: scratch, bad: bad, endsMalformed: endsMalformed)
        let onReadingThread = try Self.batches(of: path, checking: .readingThread)
        let onImportThread = try Self.batches(of: path, checking: .importThread)
        let onEither = try Self.batches(of: path, checking: .whicheverHasTime)
        if bad {
            // Rows before the first bad row's chunk may have been handed over; none after it.
            #expect(onReadingThread.rows.count < 100)
            #expect(onReadingThread.error?.contains("\(path):100: lat \"north\" is not a number") == true, "\(onReadingThread.error ?? "")")
        } else {
            #expect(onReadingThread.rows.count == lineCount - 1)
            #expect(onReadingThread.rows.last?.hasPrefix("\(lineCount): [StationCSV.ParsedBatch.Field.integer(5002999)") == true, "\(onReadingThread.rows.last ?? "")")
            #expect(onReadingThread.error == nil)
        }
        #expect(onImportThread.rows == onReadingThread.rows)
        #expect(onImportThread.error == onReadingThread.error)
        #expect(onEither.rows == onReadingThread.rows)
        #expect(onEither.error == onReadingThread.error)
    }

    /// An import of a large stations file with bad rows: every bad row is listed with its line,
    /// as for a small file, malformed CSV after them, and nothing is written.
    @Test(arguments: [false, true])
    func aLargeFilesBadRowsAreListedInOrder(endsMalformed: Bool) throws {
        let scratch = Scratch()
        let database = try scratch.baseDatabase()
        let before = try database.settledSHA256()
        let (path, lineCount) = try Self.largeStationsFile(in: scratch, bad: true, endsMalformed: endsMalformed)
        do {
            try Importer(database).importSnapshot([path])
            Issue.record("the file was imported")
        } catch let error as BadRows {
            #expect(error.rows.map(\.line) == [100, 2100, 2950] + (endsMalformed ? [lineCount] : []))
            #expect(error.rows[0].message == "lat \"north\" is not a number (expected degrees from -90.0 to 90.0)")
            #expect(error.rows[1].message.hasPrefix("14 fields, expected 15 as in the header"))
            #expect(error.rows[2].message.hasPrefix("open_ymd \"2021-02-30\" is not a valid date"))
            if endsMalformed { #expect(error.rows[3].message.hasPrefix("unterminated quoted field")) }
            #expect(error.readToTheEnd == !endsMalformed)
        }
        #expect(try database.settledSHA256() == before)
    }
}
