import CCSV
import Foundation
import StationSupport

/// One record of a CSV file: its fields as bytes, and the line it starts on.
///
/// A view into the reader's buffers, valid only while the reader's callback runs.
package struct CSVRecord {
    /// 1-based line on which the record starts (a quoted field may span lines).
    package let line: Int
    fileprivate let bytes: UnsafeBufferPointer<UInt8>
    /// Where each field ends in `bytes`: a pointer, as `bytes` is, so that handing a record on
    /// retains nothing (a slice of the array retained it for every record).
    fileprivate let ends: UnsafeBufferPointer<Int>
    fileprivate let start: Int

    package var fieldCount: Int { ends.count }

    package func field(_ index: Int) -> UnsafeBufferPointer<UInt8> {
        let from = index == 0 ? start : ends[index - 1]
        return UnsafeBufferPointer(rebasing: bytes[from..<ends[index]])
    }

    /// The fields as arrays (allocates: for headers and small files).
    package var fields: [ArraySlice<UInt8>] { (0..<fieldCount).map { ArraySlice(field($0)) } }
}

/// Streams the records of a CSV file through libcsv (strict mode).
///
/// libcsv reports no positions, so the reader feeds it one physical line at a time:
/// the line just fed is where a record ended or an error struck, and a line that ends
/// inside a quoted field marks where an unterminated quote was opened.
/// A UTF-8 byte-order mark is skipped; CRLF and LF line ends are both accepted.
package struct CSVReader {
    package let path: String
    package let displayName: String

    package init(path: String, displayName: String) {
        self.path = path
        self.displayName = displayName
    }

    /// Calls `body` for every record, header included, in file order.
    ///
    /// - Throws: `InputError` for malformed CSV (with the line and field), or what `body` throws.
    package func forEachRecord(_ body: (CSVRecord) throws -> Void) throws {
        do {
            try MappedFile.withBytes(ofFile: path) { bytes in
                try parse(bytes, recordsPerHandOver: Self.recordsPerDelivery) { sink in try sink.forEachFinished(body) }
            }
        } catch let error as FileError {
            throw InputError(.csv, file: displayName, line: nil, message: error.message)
        }
    }

    /// Hands `body` the records, header included, in chunks of about `recordsPerChunk` that it
    /// owns (`RecordChunk`): for a reader that checks the records on another thread than the one
    /// libcsv parses them on. A malformed line's error comes after the chunk of the records before it.
    ///
    /// - Parameter spare: a chunk to fill (emptied here): one the caller is done with, or a new one.
    /// - Throws: `InputError` for malformed CSV (with the line and field), or what `body` throws.
    package func forEachChunk(recordsPerChunk: Int, spare: () -> RecordChunk, _ body: (consuming RecordChunk) throws -> Void) throws {
        do {
            try MappedFile.withBytes(ofFile: path) { bytes in
                try parse(bytes, recordsPerHandOver: recordsPerChunk) { sink in
                    guard sink.finishedRecords > 0 else { return }
                    var chunk = spare()
                    chunk.removeAll()
                    sink.moveFinished(into: &chunk)
                    try body(chunk)
                }
            }
        } catch let error as FileError {
            throw InputError(.csv, file: displayName, line: nil, message: error.message)
        }
    }

    /// Calls `body` for the first record (the header) only, reading no further than its end.
    /// Blank lines before it are skipped, as `forEachRecord` skips them.
    ///
    /// - Returns: false for a file without a record.
    /// - Throws: `InputError` for malformed CSV up to the first record's end, or what `body` throws.
    package func firstRecord(_ body: (CSVRecord) throws -> Void) throws -> Bool {
        struct Found: Error {}
        do {
            try MappedFile.withBytes(ofFile: path) { bytes in
                try parse(bytes, recordsPerHandOver: 1) { sink in
                    try sink.forEachFinished { record in
                        try body(record)
                        throw Found()
                    }
                }
            }
        } catch is Found {
            return true
        } catch let error as FileError {
            throw InputError(.csv, file: displayName, line: nil, message: error.message)
        }
        return false
    }

    /// - Parameters:
    ///   - recordsPerHandOver: finished records that `handOver` gets at a time (1 for a reader
    ///     that stops after the first); it gets the rest at the end, and those before a malformed line.
    ///   - handOver: takes the sink's finished records (`forEachFinished` or `moveFinished`).
    private func parse(_ bytes: UnsafeBufferPointer<UInt8>, recordsPerHandOver: Int, _ handOver: (inout RecordSink) throws -> Void) throws {
        var start = 0
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { start = 3 }

        var parser = csv_parser()
        guard csv_init(&parser, UInt8(CSV_STRICT | CSV_STRICT_FINI)) == 0 else {
            throw InputError(.csv, file: displayName, line: nil, message: "cannot start the CSV parser")
        }
        defer { csv_free(&parser) }
        // The callbacks reach the sink through a pointer: a class's arrays would pay a dynamic
        // exclusivity check and a retain for every field.
        let sink = UnsafeMutablePointer<RecordSink>.allocate(capacity: 1)
        sink.initialize(to: RecordSink())
        defer { sink.deinitialize(count: 1); sink.deallocate() }
        let context = UnsafeMutableRawPointer(sink)

        var line = 0
        var recordStartLine = 1
        var quoteOpenedOnLine: Int?
        let base = bytes.baseAddress!

        func deliver() throws {
            try handOver(&sink.pointee)
        }

        var position = start
        while position < bytes.count {
            line += 1
            if sink.pointee.isAtRecordStart && parser.pstate == 0 { recordStartLine = line }
            sink.pointee.recordStartLine = recordStartLine
            var end = bytes.count
            if let newline = memchr(base + position, 0x0A, bytes.count - position) {
                end = base.distance(to: newline.assumingMemoryBound(to: UInt8.self)) + 1  // feed the LF too: it ends the record
            }
            let length = end - position
            let consumed = csv_parse(&parser, base + position, length, fieldCallback, recordCallback, context)
            if consumed != length {
                try deliver()  // the records before this line come first, with their own problems
                throw malformed(line: line, field: sink.pointee.fieldsInRecord + 1, error: csv_error(&parser))
            }
            // pstate 2 is libcsv's FIELD_BEGUN: still inside a quoted field at the end of this line.
            if parser.pstate == 2 && parser.quoted != 0 {
                if quoteOpenedOnLine == nil { quoteOpenedOnLine = line }
            } else {
                quoteOpenedOnLine = nil
            }
            if sink.pointee.finishedRecords >= recordsPerHandOver { try deliver() }
            if sink.pointee.isAtRecordStart { recordStartLine = line + 1 }
            position = end
        }
        if csv_fini(&parser, fieldCallback, recordCallback, context) != 0 {
            try deliver()
            throw unterminatedQuote(line: quoteOpenedOnLine ?? line)
        }
        try deliver()
    }

    private func malformed(line: Int, field: Int, error: Int32) -> InputError {
        InputError(.csv, file: displayName, line: line,
                 message: "malformed CSV in field \(field): \(Self.describe(error)) "
                    + "(expected a plain field, or a quoted one like \"a,\"\"b\"\"\" with quotes doubled inside)")
    }

    private func unterminatedQuote(line: Int) -> InputError {
        InputError(.csv, file: displayName, line: line,
                 message: "unterminated quoted field: the quote opened on this line is never closed (expected a closing \" before the end of the file)")
    }

    /// Records handed to the body at a time: handing each line's record over on its own cost
    /// more than parsing it.
    private static let recordsPerDelivery = 256

    private static func describe(_ error: Int32) -> String {
        if error == CSV_EPARSE { return "a quote inside an unquoted field, or text after a closing quote" }
        return String(cString: csv_strerror(error))
    }
}

/// Collects what libcsv's C callbacks report; they cannot capture Swift context.
/// Records are kept in flat, reused buffers until they are handed over: no allocation per
/// record, and each field's bytes are copied once.
private struct RecordSink: ~Copyable {
    /// The fields of the finished records, then those of the record being read, back to back.
    private var bytes = GrowingBuffer<UInt8>()
    private var ends = GrowingBuffer<Int>()
    /// For each finished record, how many fields it has and the line it starts on.
    private var fieldCounts = GrowingBuffer<Int>()
    private var lines = GrowingBuffer<Int>()
    /// Fields of the record being read.
    private(set) var fieldsInRecord = 0
    /// Where the record being read started: set by the reader before each line.
    package var recordStartLine = 1

    package var isAtRecordStart: Bool { fieldsInRecord == 0 }
    package var finishedRecords: Int { fieldCounts.count }

    package mutating func addField(_ pointer: UnsafeRawPointer?, _ length: Int) {
        if let pointer, length > 0 { bytes.append(copying: pointer, count: length) }
        ends.append(bytes.count)
        fieldsInRecord += 1
    }

    package mutating func endRecord() {
        fieldCounts.append(fieldsInRecord)
        lines.append(recordStartLine)
        fieldsInRecord = 0
    }

    /// Calls `body` for each finished record but blank lines, then forgets them.
    package mutating func forEachFinished(_ body: (CSVRecord) throws -> Void) throws {
        guard fieldCounts.count > 0 else { return }
        let (fields, byteCount) = try forEachRecord(bytes: bytes.elements, ends: ends.elements, fieldCounts: fieldCounts.elements,
                                                    lines: lines.elements, body)
        forgetFinished(fields: fields, bytes: byteCount)
    }

    /// Copies the finished records into `chunk`, which is empty (their fields' ends count from
    /// its start), then forgets them.
    mutating func moveFinished(into chunk: inout RecordChunk) {
        precondition(chunk.bytes.isEmpty && chunk.ends.isEmpty, "records are moved into an empty chunk")
        let fields = fieldCounts.elements.reduce(0, +)
        let byteCount = fields == 0 ? 0 : ends.elements[fields - 1]
        chunk.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: bytes.elements[..<byteCount]))
        chunk.ends.append(contentsOf: UnsafeBufferPointer(rebasing: ends.elements[..<fields]))
        chunk.fieldCounts.append(contentsOf: fieldCounts.elements)
        chunk.lines.append(contentsOf: lines.elements)
        forgetFinished(fields: fields, bytes: byteCount)
    }

    /// Drops the finished records, whose fields are the first `fields` and whose bytes the first `bytes`.
    private mutating func forgetFinished(fields: Int, bytes byteCount: Int) {
        fieldCounts.removeAll()
        lines.removeAll()
        // Keeps the fields of the record still being read (a quoted field spanning lines).
        bytes.removeFirst(byteCount)
        ends.removeFirst(fields)
        ends.subtract(byteCount)
    }
}

/// Records of a CSV file copied out of the reader's buffers (`CSVReader.forEachChunk`), owned,
/// so that another thread may read them: their fields back to back, as the reader keeps them.
package struct RecordChunk: Sendable {
    fileprivate var bytes: [UInt8] = []
    fileprivate var ends: [Int] = []
    fileprivate var fieldCounts: [Int] = []
    fileprivate var lines: [Int] = []

    package init() {}

    /// Whether the chunk holds a record that is not a blank line.
    package var hasRecord: Bool {
        struct Found: Error {}
        do { try forEach { _ in throw Found() } } catch { return true }
        return false
    }

    /// Empties the chunk for the next records, keeping its memory.
    package mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        fieldCounts.removeAll(keepingCapacity: true)
        lines.removeAll(keepingCapacity: true)
    }

    /// Calls `body` for each record but blank lines, as `CSVReader.forEachRecord` would.
    package func forEach(_ body: (CSVRecord) throws -> Void) throws {
        try bytes.withUnsafeBufferPointer { bytes in
            try ends.withUnsafeBufferPointer { ends in
                try fieldCounts.withUnsafeBufferPointer { fieldCounts in
                    try lines.withUnsafeBufferPointer { lines in
                        _ = try forEachRecord(bytes: bytes, ends: ends, fieldCounts: fieldCounts, lines: lines, body)
                    }
                }
            }
        }
    }
}

/// Calls `body` for each record of flat buffers (every record's fields back to back, `ends` where
/// each field ends), but blank lines; returns how many fields and bytes the records took.
private func forEachRecord(bytes: UnsafeBufferPointer<UInt8>, ends: UnsafeBufferPointer<Int>, fieldCounts: UnsafeBufferPointer<Int>,
                           lines: UnsafeBufferPointer<Int>, _ body: (CSVRecord) throws -> Void) throws -> (fields: Int, bytes: Int) {
    var firstEnd = 0, start = 0
    for (count, line) in zip(fieldCounts, lines) {
        let record = CSVRecord(line: line, bytes: bytes, ends: UnsafeBufferPointer(rebasing: ends[firstEnd..<(firstEnd + count)]), start: start)
        firstEnd += count
        start = ends[firstEnd - 1]
        let isBlank = count == 1 && record.field(0).allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
        if !isBlank { try body(record) }
    }
    return (firstEnd, start)
}

/// A buffer of plain values that grows by doubling and is emptied without being freed: the
/// reader's fields go through one, and `Array`'s `append(contentsOf:)` with its uniqueness and
/// capacity checks took a sixth of the parsing thread's instructions at a million stations.
private struct GrowingBuffer<Element: BitwiseCopyable>: ~Copyable {
    private var start = UnsafeMutablePointer<Element>.allocate(capacity: 1024)
    private var capacity = 1024
    private(set) var count = 0

    deinit { start.deallocate() }

    /// The values, valid until the buffer next changes.
    var elements: UnsafeBufferPointer<Element> { UnsafeBufferPointer(start: start, count: count) }

    mutating func append(_ element: Element) {
        if count == capacity { grow(to: count + 1) }
        (start + count).initialize(to: element)
        count += 1
    }

    /// Appends `count` values copied byte for byte from `source`.
    mutating func append(copying source: UnsafeRawPointer, count added: Int) {
        if count + added > capacity { grow(to: count + added) }
        UnsafeMutableRawPointer(start + count).copyMemory(from: source, byteCount: added * MemoryLayout<Element>.stride)
        count += added
    }

    mutating func removeAll() { count = 0 }

    /// Drops the first `dropped` values, moving the rest to the front.
    mutating func removeFirst(_ dropped: Int) {
        precondition(dropped <= count)
        if dropped > 0 && dropped < count { start.update(from: start + dropped, count: count - dropped) }
        count -= dropped
    }

    /// Subtracts `amount` from every value (the ends of fields kept after `removeFirst`).
    mutating func subtract(_ amount: Element) where Element == Int {
        guard amount != 0 else { return }
        for index in 0..<count { start[index] -= amount }
    }

    private mutating func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let grown = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        grown.initialize(from: start, count: count)
        start.deallocate()
        start = grown
        capacity = newCapacity
    }
}

private func fieldCallback(_ field: UnsafeMutableRawPointer?, _ length: Int, _ context: UnsafeMutableRawPointer?) {
    context!.assumingMemoryBound(to: RecordSink.self).pointee.addField(field, length)
}

private func recordCallback(_ terminator: Int32, _ context: UnsafeMutableRawPointer?) {
    context!.assumingMemoryBound(to: RecordSink.self).pointee.endRecord()
}

