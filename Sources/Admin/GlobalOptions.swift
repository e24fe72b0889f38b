import ArgumentParser
import CStandardStreams
import Foundation
import StationCheck
import StationDelta
import StationImport
import StationLog
import StationSchema
import StationSupport
import StationVersion

/// Options every subcommand shares.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The master database (default: $STATION_ADMIN_DB, else ./master.sqlite).", valueName: "path"))
    var db: String?

    @Flag(name: .customLong("no-pager"), help: "Print long output (log, diff --show, check, suggest) instead of paging it on a terminal.")
    var noPager = false

    var databasePath: String {
        db ?? ProcessInfo.processInfo.environment["STATION_ADMIN_DB"] ?? "master.sqlite"
    }

    func openDatabase(author: AuthorOption? = nil) throws -> MasterDatabase {
        try MasterDatabase.open(at: databasePath, author: author?.name)
    }
}

/// Who makes a version: kept with it in the master (curator data, never published).
struct AuthorOption: ParsableArguments {
    @Option(help: ArgumentHelp("Who makes the version (default: $STATION_ADMIN_AUTHOR, else the login name).", valueName: "name"))
    var author: String?

    var name: String {
        author ?? ProcessInfo.processInfo.environment["STATION_ADMIN_AUTHOR"] ?? ProcessInfo.processInfo.userName
    }
}

/// Options of commands that print data.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON instead of text.")
    var json = false

    static let oneFormOnly = "--json prints one JSON document and --nl one JSON object per line: choose one."
}

/// A failure whose exit status is not the usual 1, because 1 means something else for the
/// command (`diff --exit-code`: "the files would change something").
struct FailedWithStatus: Error {
    let underlying: any Error
    let status: Int32
}

enum Console {
    /// One line of text output: control characters in names are shown escaped, so that
    /// data cannot forge extra lines or redraw the terminal (JSON keeps the exact value).
    static func line(_ text: String) {
        print(text.escapingControlCharacters)
    }

    /// One line of tab-separated fields: each field escaped, the tabs between them kept.
    static func fields(_ fields: [String]) {
        print(fields.map(\.escapingControlCharacters).joined(separator: "\t"))
    }

    /// A message on stderr. When stderr itself cannot be written (a full disk, a closed pipe),
    /// there is nowhere to say so: the command exits 1 at once, never 0 and never by a crash.
    static func error(_ message: String) {
        let bytes = Array((message + "\n").utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { exit(1) }
            written += count
        }
    }

    /// Flushes what `print` buffered on stdout; a write that failed (a full disk behind a
    /// redirection, a closed pipe) is an error, not a success with a truncated file. A command
    /// that wrote to the master did so before its output: its status says what it committed.
    static func finishStandardOutput() -> Bool {
        let failure = station_admin_finish_stdout()
        if failure == 0 { return true }
        let reason = String(cString: strerror(failure))
        error("Error: cannot write standard output (\(reason)); what the command wrote to the master stands (station-admin status shows the version).")
        return false
    }

    /// One compact JSON object on one line (`--nl`), for streaming into other tools.
    static func printJSONLine<T: Encodable>(_ value: T) throws {
        try JSONLinePrinter().print(value)
    }

    static func printJSON<T: Encodable>(_ value: T) throws {
        print(String(decoding: try jsonEncoder().encode(value), as: UTF8.self))
    }

    /// What `printJSON(value)` prints were its `findings` the array spooled in `findings` (by a
    /// `JSONArrayStream` one level deep): the same bytes, in the memory of a buffer.
    static func printJSON<T: Encodable>(_ value: T, spooledFindings findings: SpoolFile) throws {
        let whole = String(decoding: try jsonEncoder().encode(value), as: UTF8.self)
        let emptyFindings = "\"findings\" : [\n\n  ]"
        guard let place = whole.range(of: emptyFindings) else { preconditionFailure("the JSON has no empty findings to fill") }
        let output = FileSink.standardOutput()
        try output.write(String(whole[..<place.lowerBound]) + "\"findings\" : ")
        try findings.copy(to: output)
        try output.write(String(whole[place.upperBound...]) + "\n")
        try output.finish()
    }

    /// What `printJSON(report)` prints were `report.changes` every change in `changes`: the
    /// same bytes, encoded a batch at a time, so two million changes take the memory of a batch.
    static func printJSON(_ report: ChangeReport, listing changes: DescribedChangeFile) throws {
        var head = report
        head.changes = []
        // Keys are sorted and `changes` comes first: the rest of the report follows its empty array.
        let emptyChanges = "{\n  \"changes\" : [\n\n  ]"
        let rest = String(decoding: try jsonEncoder().encode(head), as: UTF8.self)
        precondition(rest.hasPrefix(emptyChanges), "the report's JSON no longer starts with its changes")
        let output = FileSink.standardOutput()
        try output.write("{\n  \"changes\" : ")
        var array = JSONArrayStream<DescribedChange>(output, depth: 1)
        try changes.forEach { try array.append($0) }
        try array.finish()
        try output.write(rest.dropFirst(emptyChanges.count) + "\n")
        try output.finish()
    }

    /// What `printJSON` prints for the array of everything `produce` hands over, a batch at a time.
    static func printJSONArray<Element: Encodable & Sendable>(_ produce: (_ append: (Element) throws -> Void) throws -> Void) throws {
        let output = FileSink.standardOutput()
        var array = JSONArrayStream<Element>(output, depth: 0)
        try produce { try array.append($0) }
        try array.finish()
        try output.write("\n")
        try output.finish()
    }

    /// Writes a pretty-printed JSON array a batch of elements at a time: the bytes `JSONEncoder`
    /// writes for the whole array `depth` levels deep, in the memory of one batch.
    ///
    /// The elements of a batch are encoded on every core, each core a slice of it with its own
    /// encoder, and written in order: one `JSONEncoder` on one core was most of a 1M import's listing.
    struct JSONArrayStream<Element: Encodable & Sendable> {
        static var batchSize: Int { 4096 }
        private let output: ByteSink
        private let indent: [UInt8]
        private var count = 0
        private var pending: [Element] = []

        init(_ output: ByteSink, depth: Int) {
            self.output = output
            indent = Array(String(repeating: "  ", count: depth + 1).utf8)
        }

        mutating func append(_ value: Element) throws {
            pending.append(value)
            if pending.count == Self.batchSize { try flush() }
        }

        /// Closes the array (an empty one as the encoder writes it: a blank line between the brackets).
        mutating func finish() throws {
            try flush()
            try output.write((count == 0 ? "[\n" : "") + "\n" + String(decoding: indent.dropLast(2), as: UTF8.self) + "]")
        }

        private mutating func flush() throws {
            guard !pending.isEmpty else { return }
            let batch = pending, indent = indent, first = count
            let slices = min(ProcessInfo.processInfo.activeProcessorCount, batch.count)
            let encoded = ConcurrentWork.results(count: slices) { slice in
                let range = (batch.count * slice / slices)..<(batch.count * (slice + 1) / slices)
                let encoder = Console.jsonEncoder()
                var bytes: [UInt8] = []
                for index in range {
                    // The opening bracket waits for the first element: a producer that throws before it prints nothing.
                    bytes.append(contentsOf: (first + index == 0 ? "[\n" : ",\n").utf8)
                    bytes += indent
                    try Self.appendIndented(encoder.encode(batch[index]), indent, to: &bytes)
                }
                return bytes
            }
            for slice in 0..<slices { try encoded[slice].get().withUnsafeBytes { try output.write($0) } }
            count += batch.count
            pending.removeAll(keepingCapacity: true)
        }

        /// The element's lines, each after the first indented by its depth in the array.
        private static func appendIndented(_ encoded: Data, _ indent: [UInt8], to bytes: inout [UInt8]) {
            encoded.withUnsafeBytes { (encoded: UnsafeRawBufferPointer) in
                var lineStart = 0
                for index in encoded.indices where encoded[index] == UInt8(ascii: "\n") {
                    bytes.append(contentsOf: encoded[lineStart...index])
                    // An empty array's blank line stays blank, as the encoder writes it.
                    if encoded[index + 1] != UInt8(ascii: "\n") { bytes += indent }
                    lineStart = index + 1
                }
                bytes.append(contentsOf: encoded[lineStart...])
            }
        }
    }

    /// Prints one compact JSON object per line, with one encoder for all of them.
    struct JSONLinePrinter {
        private let encoder = jsonLineEncoder()
        func print<T: Encodable>(_ value: T) throws {
            Swift.print(String(decoding: try encoder.encode(value), as: UTF8.self))
        }
    }

    private static func jsonLineEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }

    static func jsonEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // The manifest's style: one contract for every key the tool prints (docs/json.md).
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }
}
