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

/// The JSON the tool prints: one document, one line each (`--nl`), or arrays of any length
/// streamed a batch at a time. A large report's array is streamed as one key of its document
/// (`JSONObjectStream`), the rest encoded key by key; JSONContractTests validates what each
/// command prints against its schema, and that a streamed document is the whole one's bytes.
extension Console {
    /// One compact JSON object on one line (`--nl`), for streaming into other tools.
    static func printJSONLine<T: Encodable>(_ value: T) throws {
        try JSONLinePrinter().print(value)
    }

    static func printJSON<T: Encodable>(_ value: T) throws {
        print(String(decoding: try jsonEncoder().encode(value), as: UTF8.self))
    }

    /// What `printJSON(value)` prints were its `findings` the array spooled in `findings` (by a
    /// `JSONArrayStream` one level deep): the same bytes, in the memory of a buffer.
    static func printJSON<T: Encodable>(_ value: T, spooledFindings findings: SpoolFile, to output: ByteSink = FileSink.standardOutput()) throws {
        try JSONObjectStream(output).write(value, streaming: "findings") { try findings.copy(to: output) }
        try output.finish()
    }

    /// What `printJSON(report)` prints were `report.changes` every change in `changes`: the
    /// same bytes, encoded a batch at a time, so two million changes take the memory of a batch.
    static func printJSON(_ report: ChangeReport, listing changes: DescribedChangeFile, to output: ByteSink = FileSink.standardOutput()) throws {
        var head = report
        head.changes = []
        try JSONObjectStream(output).write(head, streaming: "changes") {
            var array = JSONArrayStream<DescribedChange>(output, depth: 1)
            try changes.forEach { try array.append($0) }
            try array.finish()
        }
        try output.finish()
    }

    /// A top-level JSON object written key by key as `jsonEncoder()` writes it whole (keys in
    /// order, two-space indents), one key's value written by the caller as it streams: every
    /// other key's value is decoded from the head's own encoding and encoded again, each alone.
    struct JSONObjectStream {
        private let output: ByteSink

        init(_ output: ByteSink) { self.output = output }

        /// `head` as `printJSON` prints it, `key`'s value written by `value` (whatever `head`
        /// holds there is left out), then a newline.
        func write<Head: Encodable>(_ head: Head, streaming key: String, value: () throws -> Void) throws {
            var fields = try JSONDecoder().decode([String: JSONValue].self, from: Console.jsonEncoder().encode(head))
            fields[key] = nil
            // The keys' order is the encoder's `.sortedKeys`: by their characters' code points.
            let keys = (Array(fields.keys) + [key]).sorted()
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try output.write("{\n")
            for (index, name) in keys.enumerated() {
                try output.write((index == 0 ? "" : ",\n") + "  " + String(decoding: try encoder.encode(name), as: UTF8.self) + " : ")
                if let field = fields[name] {
                    // The value one level deep: each line but an empty array's blank one indented.
                    let text = String(decoding: try encoder.encode(field), as: UTF8.self)
                    try output.write(text.split(separator: "\n", omittingEmptySubsequences: false)
                        .enumerated().map { $0.offset == 0 || $0.element.isEmpty ? String($0.element) : "  " + $0.element }
                        .joined(separator: "\n"))
                } else {
                    try value()
                }
            }
            try output.write("\n}\n")
        }
    }

    /// Any JSON value, decoded to be encoded again as it was: a whole number stays one.
    enum JSONValue: Codable {
        case null, bool(Bool), integer(Int64), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .null }
            else if let value = try? container.decode(Bool.self) { self = .bool(value) }
            else if let value = try? container.decode(Int64.self) { self = .integer(value) }
            else if let value = try? container.decode(Double.self) { self = .number(value) }
            else if let value = try? container.decode(String.self) { self = .string(value) }
            else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
            else { self = .object(try container.decode([String: JSONValue].self)) }
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .bool(let value): try container.encode(value)
            case .integer(let value): try container.encode(value)
            case .number(let value): try container.encode(value)
            case .string(let value): try container.encode(value)
            case .array(let value): try container.encode(value)
            case .object(let value): try container.encode(value)
            }
        }
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
