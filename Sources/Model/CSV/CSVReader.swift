import CCSV
import Foundation

/// One record of a CSV file: its fields as bytes, and the line it starts on.
struct CSVRecord {
    /// 1-based line on which the record starts (a quoted field may span lines).
    let line: Int
    let fields: [ArraySlice<UInt8>]
}

/// Streams the records of a CSV file through libcsv (strict mode).
///
/// libcsv reports no positions, so the reader feeds it one physical line at a time:
/// the line just fed is where a record ended or an error struck, and a line that ends
/// inside a quoted field marks where an unterminated quote was opened.
/// A UTF-8 byte-order mark is skipped; CRLF and LF line ends are both accepted.
struct CSVReader {
    let path: String
    let displayName: String

    /// Calls `body` for every record, header included, in file order.
    ///
    /// - Throws: `CSVError` for malformed CSV (with the line and field), or what `body` throws.
    func forEachRecord(_ body: (CSVRecord) throws -> Void) throws {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe)
        } catch {
            throw CSVError(file: displayName, line: nil, message: "cannot read the file (\(error.localizedDescription))")
        }
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            try parse(bytes, body)
        }
    }

    private func parse(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (CSVRecord) throws -> Void) throws {
        var start = 0
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { start = 3 }

        var parser = csv_parser()
        guard csv_init(&parser, UInt8(CSV_STRICT | CSV_STRICT_FINI)) == 0 else {
            throw CSVError(file: displayName, line: nil, message: "cannot start the CSV parser")
        }
        defer { csv_free(&parser) }
        let sink = RecordSink()
        let context = Unmanaged.passUnretained(sink).toOpaque()

        var line = 0
        var recordStartLine = 1
        var quoteOpenedOnLine: Int?
        let base = bytes.baseAddress!

        func deliver() throws {
            for record in sink.takeRecords(line: recordStartLine) where !record.isBlank {
                try body(record.record)
            }
        }

        var position = start
        while position < bytes.count {
            line += 1
            if sink.isAtRecordStart && parser.pstate == 0 { recordStartLine = line }
            var end = position
            while end < bytes.count && bytes[end] != 0x0A { end += 1 }
            if end < bytes.count { end += 1 }  // feed the LF too: it ends the record
            let length = end - position
            let consumed = csv_parse(&parser, base + position, length, fieldCallback, recordCallback, context)
            if consumed != length {
                throw CSVError(
                    file: displayName, line: line,
                    message: "malformed CSV in field \(sink.fieldsInRecord + 1): \(Self.describe(csv_error(&parser))) "
                        + "(expected a plain field, or a quoted one like \"a,\"\"b\"\"\" with quotes doubled inside)")
            }
            // pstate 2 is libcsv's FIELD_BEGUN: still inside a quoted field at the end of this line.
            if parser.pstate == 2 && parser.quoted != 0 {
                if quoteOpenedOnLine == nil { quoteOpenedOnLine = line }
            } else {
                quoteOpenedOnLine = nil
            }
            try deliver()
            if sink.isAtRecordStart { recordStartLine = line + 1 }
            position = end
        }
        if csv_fini(&parser, fieldCallback, recordCallback, context) != 0 {
            throw CSVError(
                file: displayName, line: quoteOpenedOnLine ?? line,
                message: "unterminated quoted field: the quote opened on this line is never closed (expected a closing \" before the end of the file)")
        }
        try deliver()
    }

    private static func describe(_ error: Int32) -> String {
        if error == CSV_EPARSE { return "a quote inside an unquoted field, or text after a closing quote" }
        return String(cString: csv_strerror(error))
    }
}

/// Collects what libcsv's C callbacks report; they cannot capture Swift context.
private final class RecordSink {
    private var bytes: [UInt8] = []
    private var ends: [Int] = []
    private var finished: [(bytes: [UInt8], ends: [Int])] = []

    var fieldsInRecord: Int { ends.count }
    var isAtRecordStart: Bool { ends.isEmpty }

    func addField(_ pointer: UnsafeRawPointer?, _ length: Int) {
        if let pointer, length > 0 {
            bytes.append(contentsOf: UnsafeRawBufferPointer(start: pointer, count: length))
        }
        ends.append(bytes.count)
    }

    func endRecord() {
        finished.append((bytes, ends))
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
    }

    func takeRecords(line: Int) -> [(record: CSVRecord, isBlank: Bool)] {
        guard !finished.isEmpty else { return [] }
        defer { finished.removeAll(keepingCapacity: true) }
        return finished.map { record in
            var fields: [ArraySlice<UInt8>] = []
            fields.reserveCapacity(record.ends.count)
            var start = 0
            for end in record.ends {
                fields.append(record.bytes[start..<end])
                start = end
            }
            let isBlank = fields.count == 1 && fields[0].allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
            return (CSVRecord(line: line, fields: fields), isBlank)
        }
    }
}

private func fieldCallback(_ field: UnsafeMutableRawPointer?, _ length: Int, _ context: UnsafeMutableRawPointer?) {
    Unmanaged<RecordSink>.fromOpaque(context!).takeUnretainedValue().addField(field, length)
}

private func recordCallback(_ terminator: Int32, _ context: UnsafeMutableRawPointer?) {
    Unmanaged<RecordSink>.fromOpaque(context!).takeUnretainedValue().endRecord()
}

/// A problem in an input file, located as `FILE:LINE`.
public struct CSVError: Error, LocalizedError, Equatable {
    public let file: String
    public let line: Int?
    public let message: String

    public var errorDescription: String? {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}
