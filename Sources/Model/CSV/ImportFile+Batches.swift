import Foundation
#if canImport(Glibc)
import Glibc
#endif
import StationSupport

/// Reading an import file: its rows parsed and checked (libcsv, field rules), in batches.
extension ImportFile {
    package static let batchSize = 2048
    /// Smaller files are read on the consuming thread: below about two batches of rows, a second
    /// thread has nothing to overlap. The real stations file (1.4 MB) and connections file (220 KB)
    /// are read on a second one: the overlap pays even at their size (benchmarks/RESULTS.md).
    package static let threadedFromBytes = 128 << 10

    /// Reads the file on a second thread when it is large, and hands its batches to `body` here.
    ///
    /// - Throws: `InputError` naming the file, line and column: a wrong field count or a bad value;
    ///   any error `body` throws.
    package func forEachBatch(_ body: (ParsedBatch) throws -> Void) throws {
        let size = FileChecks.size(path) ?? 0
        let threaded = size >= Self.threadedFromBytes
        let channel = BatchChannel(capacity: threaded ? 4 : .max)
        let reading = DispatchGroup()
        let file = self
        if threaded {
            reading.enter()
            DispatchQueue.global().async {
                channel.finish(Self.read(file, into: channel))
                reading.leave()
            }
        } else {
            channel.finish(Self.read(file, into: channel))
        }
        defer {
            channel.cancel()
            reading.wait()
        }
        while let batch = try channel.take() {
            try body(batch)
            channel.recycle(consume batch)
        }
    }

    /// About how many lines a file has, from the lines in its first 64 KiB and its size
    /// (exact for a smaller file): enough to size a table of its keys, without reading the
    /// whole file once more before its rows are compared (a 1M stations file is 133 MB).
    package static func estimatedLineCount(_ path: String) -> Int? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        let size = Int(status.st_size)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 64)
        defer { buffer.deallocate() }
        var sampled = 0
        while sampled < min(size, buffer.count) {
            let count = pread(descriptor, buffer.baseAddress! + sampled, buffer.count - sampled, off_t(sampled))
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            sampled += count
        }
        guard sampled > 0 else { return 0 }
        let lines = UnsafeRawBufferPointer(start: buffer.baseAddress, count: sampled).reduce(0) { $1 == 0x0A ? $0 + 1 : $0 }
        return sampled >= size ? lines : Int((Double(size) * Double(lines) / Double(sampled)).rounded(.up))
    }

    /// Lines in a file (a quoted newline counts too: a progress estimate), read into one buffer
    /// used again for every block: a fresh 4 MiB block each time costs page faults.
    package static func lineCount(_ path: String) -> Int? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 64)
        defer { buffer.deallocate() }
        var lines = 0
        while true {
            let count = readBlock(descriptor, buffer)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return count == 0 ? lines : nil }
            var next = UnsafeRawPointer(buffer.baseAddress!), rest = count
            while rest > 0, let found = memchr(next, 0x0A, rest) {
                lines += 1
                let after = UnsafeRawPointer(found) + 1
                rest -= after - next
                next = after
            }
        }
    }

    /// Reads and checks the file, handing rows over in batches. Returns the error that
    /// stopped it (nil at the end of a good file).
    ///
    /// A bad row (a wrong field count, a value its column refuses) does not stop the reading: the
    /// rows after it are checked too, up to `BadRows.reported` bad ones, so that one run lists what
    /// a curator fixes in one sitting. From the first bad row on, no row is handed over: the
    /// import fails, and the rows already handed over go with its rolled-back transaction.
    /// Malformed CSV (an unterminated quote) stops at once: what follows it is not rows.
    private static func read(_ file: ImportFile, into channel: BatchChannel) -> Error? {
        struct Cancelled: Error {}
        struct EnoughBadRows: Error {}
        let header = file.header
        let decoder = FieldDecoder(file: file.displayName, columns: header.columns)
        let width = header.columns.count
        // Only plain values and strings made once are used per record: using `file` and `header`
        // there copied both, with their retains, for every record.
        let displayName = file.displayName
        let headerText = header.columns.map(\.name).joined(separator: ",")
        var batch = channel.emptyBatch(capacity: batchSize, fieldsPerRow: width)
        var isHeader = true
        var badRows: [InputError] = []
        do {
            try CSVReader(path: file.path, displayName: file.displayName).forEachRecord { record in
                if isHeader {
                    isHeader = false
                    return
                }
                let fieldsBefore = batch.fields.count, textBefore = batch.text.count
                do {
                    try appendFields(of: record, width: width, decoder: decoder, displayName: displayName, headerText: headerText, to: &batch)
                } catch let problem as InputError where problem.input == .csv && problem.line != nil {
                    badRows.append(problem)
                    if badRows.count == BadRows.reported { throw EnoughBadRows() }
                }
                guard badRows.isEmpty else {
                    batch.fields.removeSubrange(fieldsBefore...)
                    batch.text.removeSubrange(textBefore...)
                    return
                }
                batch.lines.append(record.line)
                if batch.count == batchSize {
                    guard channel.put(batch) else { throw Cancelled() }
                    batch = channel.emptyBatch(capacity: batchSize, fieldsPerRow: width)
                }
            }
        } catch is Cancelled {
            return nil
        } catch is EnoughBadRows {
            return BadRows(file: displayName, rows: badRows, readToTheEnd: false)
        } catch {
            // Malformed CSV after bad rows: both are told, the bad rows first.
            if !badRows.isEmpty { return BadRows(file: displayName, rows: badRows + [error as? InputError].compactMap { $0 }.filter { $0.input == .csv }, readToTheEnd: false) }
            if batch.count > 0 { _ = channel.put(batch) }
            return error
        }
        if isHeader {
            return InputError(.csv, file: file.displayName, line: nil, message: "empty file (expected a header line, then one row per record)")
        }
        if !badRows.isEmpty { return badRows.count == 1 ? badRows[0] : BadRows(file: displayName, rows: badRows, readToTheEnd: true) }
        if batch.count > 0 { _ = channel.put(batch) }
        return nil
    }

    /// The record's fields, each parsed by its column's rule, appended to the batch (a text's
    /// bytes to its text).
    @inline(__always)
    private static func appendFields(of record: CSVRecord, width: Int, decoder: FieldDecoder, displayName: String, headerText: String,
                                     to batch: inout ParsedBatch) throws {
        guard record.fieldCount == width else {
            throw InputError(.csv, file: displayName, line: record.line, message: "\(record.fieldCount) fields, expected \(width) as in the header (\(headerText))")
        }
        for index in 0..<width {
            switch try decoder.parse(record.field(index), column: index, line: record.line) {
            case .null: batch.fields.append(.null)
            case .integer(let value): batch.fields.append(.integer(value))
            case .real(let value): batch.fields.append(.real(value))
            case .text(let bytes):
                batch.fields.append(.text(start: batch.text.count, count: bytes.count))
                batch.text.append(contentsOf: bytes)
            }
        }
    }
}

/// Several bad rows of one file, found in one reading: each with its line, column and what was
/// expected. One bad row alone is thrown as its `InputError`.
public struct BadRows: Error, LocalizedError, Equatable {
    /// How many bad rows a file's reading lists before it stops.
    public static let reported = 20
    /// The file as the user named it.
    public let file: String
    /// The bad rows in the order of the file (a malformed-CSV error last, when one stopped the reading).
    public let rows: [InputError]
    /// False when the reading stopped at `reported` rows (or at malformed CSV): more may follow.
    public let readToTheEnd: Bool

    /// The file, then each bad row on a line of its own, as `InputError` puts it.
    public var errorDescription: String? {
        // `import` and `diff` both read files this way: the words fit either (an import that fails writes nothing).
        let head = readToTheEnd
            ? "\(file): \(rows.count) bad rows. Fix them and run the command again:"
            : "\(file): the first \(rows.count) bad rows; the reading stopped here, and more may follow. "
                + "Fix them and run the command again:"
        return ([head] + rows.map { "  " + ($0.errorDescription ?? $0.message) }).joined(separator: "\n")
    }
}

/// `read(2)`: inside `ImportFile`, `read` names its own reader.
private func readBlock(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
    read(descriptor, buffer.baseAddress, buffer.count)
}
