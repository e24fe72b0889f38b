import Foundation
#if canImport(Glibc)
import Glibc
#endif
import StationSupport

/// Reading an import file: its rows parsed and checked (libcsv, field rules), in batches.
extension ImportFile {
    /// Records parsed at a time: the rows of a batch.
    package static let batchSize = 2048
    /// Smaller files are read on the consuming thread: below about two batches of rows, a second
    /// thread has nothing to overlap. The real stations file (1.4 MB) and connections file (220 KB)
    /// are read on a second one: the overlap pays even at their size (benchmarks/RESULTS.md).
    package static let threadedFromBytes = 128 << 10

    /// Reads the file on a second thread when it is large, and hands its batches to `body` here.
    ///
    /// The second thread parses (libcsv) and checks the rows (the columns' rules) while `body`
    /// compares; but a chunk it parses while `body` waits for one is handed over unchecked, and
    /// checked here: which half of an import is the longer depends on the file (long quoted
    /// addresses make libcsv's; short rows the comparison's), and so the checks go to whichever
    /// thread has time, with no third thread to take a core from both.
    ///
    /// - Parameter checking: where the rows are checked; tests pin it to one thread or the other.
    /// - Throws: `InputError` naming the file, line and column: a wrong field count or a bad value,
    ///   or several in a `BadRows` (up to `BadRows.reported`); any error `body` throws.
    package func forEachBatch(checking: RowCheckingThread = .whicheverHasTime, _ body: (ParsedBatch) throws -> Void) throws {
        let size = FileChecks.size(path) ?? 0
        let threaded = size >= Self.threadedFromBytes
        let chunks = RecyclingQueue<ReadChunk>(capacity: threaded ? 4 : .max)
        let reading = DispatchGroup()
        let file = self
        if threaded {
            reading.enter()
            DispatchQueue.global().async {
                chunks.finish(Self.read(file, into: chunks, checking: checking))
                reading.leave()
            }
        } else {
            chunks.finish(Self.read(file, into: chunks, checking: checking))
        }
        defer {
            chunks.cancel()
            reading.wait()
        }
        let rules = RowRules(file)
        // A bad row does not stop the reading: the rows after it are checked too, up to
        // `BadRows.reported` bad ones, so that one run lists what a curator fixes in one sitting.
        // From the first bad row on, no row is handed over: the import fails, and the rows
        // already handed over go with its rolled-back transaction.
        var badRows: [InputError] = []
        do {
            while var chunk = try chunks.take() {
                if !chunk.isChecked { try rules.check(&chunk) }
                badRows += chunk.badRows.prefix(BadRows.reported - badRows.count)
                if badRows.count == BadRows.reported { throw BadRows(file: displayName, rows: badRows, readToTheEnd: false) }
                if badRows.isEmpty && chunk.rows.count > 0 { try body(chunk.rows) }
                chunks.recycle(chunk)
            }
        } catch let malformed as InputError where malformed.input == .csv && !badRows.isEmpty {
            // Malformed CSV after bad rows: both are told, the bad rows first.
            throw BadRows(file: displayName, rows: badRows + [malformed], readToTheEnd: false)
        }
        if !badRows.isEmpty { throw badRows.count == 1 ? badRows[0] : BadRows(file: displayName, rows: badRows, readToTheEnd: true) }
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

    /// Parses the file, handing its records over in chunks, each checked here unless the
    /// consumer is waiting for it. Returns the error that stopped it (nil at the end of a good
    /// file, or when the consumer gave up): malformed CSV (an unterminated quote) stops at once,
    /// after the chunk of the records before it, since what follows it is not rows.
    private static func read(_ file: ImportFile, into chunks: RecyclingQueue<ReadChunk>, checking: RowCheckingThread) -> Error? {
        struct Cancelled: Error {}
        let rules = RowRules(file)
        var sawHeader = false
        // The spare chunk whose records buffer the reader fills: its rows' buffers are used again too.
        var filling: ReadChunk?
        do {
            try CSVReader(path: file.path, displayName: file.displayName).forEachChunk(recordsPerChunk: batchSize) {
                var spare = chunks.spare() ?? ReadChunk(rowCapacity: batchSize, fieldsPerRow: rules.width)
                let records = spare.records
                spare.records = RecordChunk()
                filling = spare
                return records
            } _: { records in
                var chunk = filling ?? ReadChunk(rowCapacity: batchSize, fieldsPerRow: rules.width)
                filling = nil
                chunk.removeAll()
                chunk.records = records
                if !sawHeader {
                    chunk.startsWithHeader = records.hasRecord
                    sawHeader = chunk.startsWithHeader
                }
                let checksHere = switch checking {
                case .whicheverHasTime: chunks.waiting > 0
                case .readingThread: true
                case .importThread: false
                }
                if checksHere { try rules.check(&chunk) }
                guard chunks.put(chunk) else { throw Cancelled() }
            }
        } catch is Cancelled {
            return nil
        } catch {
            return error
        }
        if !sawHeader {
            return InputError(.csv, file: file.displayName, line: nil, message: "empty file (expected a header line, then one row per record)")
        }
        return nil
    }

    /// Which thread checks a chunk's rows (`forEachBatch`).
    package enum RowCheckingThread: Sendable {
        /// The reading thread, unless the import's thread is waiting for the chunk.
        case whicheverHasTime
        case readingThread
        case importThread
    }

    /// The rules a file's rows are checked by: each field by its column's (`FieldDecoder`), and
    /// the header's width.
    private struct RowRules {
        let decoder: FieldDecoder
        let width: Int
        // Only plain values and strings made once are used per record: using the file and its
        // header there copied both, with their retains, for every record.
        let displayName: String
        let headerText: String

        init(_ file: ImportFile) {
            decoder = FieldDecoder(file: file.displayName, columns: file.header.columns)
            width = file.header.columns.count
            displayName = file.displayName
            headerText = file.header.columns.map(\.name).joined(separator: ",")
        }

        /// Checks the chunk's records into its rows; a refused row goes to its bad rows instead.
        func check(_ chunk: inout ReadChunk) throws {
            // Read from a copy of the records (their buffers shared, never written) while the rows change.
            let records = chunk.records
            var isHeader = chunk.startsWithHeader
            try records.forEach { record in
                if isHeader {
                    isHeader = false
                    return
                }
                let fieldsBefore = chunk.rows.fields.count, textBefore = chunk.rows.text.count
                do {
                    try appendFields(of: record, to: &chunk.rows)
                    chunk.rows.lines.append(record.line)
                } catch let problem as InputError where problem.input == .csv && problem.line != nil {
                    chunk.rows.fields.removeSubrange(fieldsBefore...)
                    chunk.rows.text.removeSubrange(textBefore...)
                    if chunk.badRows.count < BadRows.reported { chunk.badRows.append(problem) }
                }
            }
            chunk.isChecked = true
        }

        /// The record's fields, each parsed by its column's rule, appended to the batch (a text's
        /// bytes to its text).
        @inline(__always)
        private func appendFields(of record: CSVRecord, to batch: inout ParsedBatch) throws {
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
