import Foundation
import StationSchema
import StationSupport

/// Every change of a report in words, kept in a temporary file: an import of two million
/// changes describes them inside its transaction and lists them after commit, in the memory
/// of one change rather than of all of them.
///
/// The file is unlinked as soon as it is made, so nothing is left behind, not even by a
/// killed process. Records are length-prefixed (private to this type, read back only by it):
///
///     let changes = try DescribedChangeFile()
///     let report = try database.importSnapshot(paths, options: ImportOptions(describeLimit: 0), listingEveryChangeIn: changes)
///     try changes.forEach { print($0.summary) }
public final class DescribedChangeFile {
    /// How many changes the file holds.
    public private(set) var count = 0
    private let spool: SpoolFile
    /// The record being encoded.
    private var pending: [UInt8] = []
    private static let absent = UInt32.max

    /// A new, empty list in a temporary file under `directory`.
    ///
    /// - Throws: `FileError` when it cannot be created.
    public init(directory: String = NSTemporaryDirectory()) throws {
        spool = try SpoolFile(directory: directory, purpose: "for the list of changes")
    }

    package func append(_ change: DescribedChange) throws {
        pending.removeAll(keepingCapacity: true)
        let start = 0
        pending.append(contentsOf: [0, 0, 0, 0])
        put(change.table)
        put(change.key)
        put(change.kind.rawValue)
        put(change.name)
        put(UInt32(change.fields.count))
        for field in change.fields {
            put(field.column)
            put(field.old)
            put(field.new)
        }
        let length = UInt32(pending.count - start - 4)
        withUnsafeBytes(of: length.littleEndian) { pending.replaceSubrange(start..<start + 4, with: $0) }
        count += 1
        try pending.withUnsafeBytes { try spool.write($0) }
    }

    /// Calls `body` with each change, in the order they were appended.
    public func forEach(_ body: (DescribedChange) throws -> Void) throws {
        try spool.finish()
        var reader = RecordReader(spool: spool)
        while let record = try reader.next() {
            var decoder = RecordDecoder(bytes: record)
            let table = decoder.string(), key = decoder.string(), kind = decoder.string(), name = decoder.optionalString()
            var fields: [FieldChange] = []
            for _ in 0..<decoder.number() {
                fields.append(FieldChange(column: decoder.string(), old: decoder.optionalString(), new: decoder.optionalString()))
            }
            try body(DescribedChange(table: table, key: key, kind: Update.Kind(rawValue: kind)!, name: name, fields: fields))
        }
    }

    private func put(_ number: UInt32) {
        withUnsafeBytes(of: number.littleEndian) { pending.append(contentsOf: $0) }
    }

    private func put(_ text: String?) {
        guard var text else { return put(Self.absent) }
        text.withUTF8 { utf8 in
            put(UInt32(utf8.count))
            pending.append(contentsOf: utf8)
        }
    }

    /// Whole records from the file, read in large chunks.
    private struct RecordReader {
        package let spool: SpoolFile
        package var offset: Int64 = 0
        package var buffer: [UInt8] = []
        package var start = 0

        package init(spool: SpoolFile) { self.spool = spool }

        package mutating func next() throws -> ArraySlice<UInt8>? {
            try fill(4)
            if buffer.count == start { return nil }
            guard buffer.count - start >= 4 else { throw FileError(cannot: "read the list of changes back", code: nil, reason: "the file ends inside a change") }
            let length = Int(buffer[start..<start + 4].withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) })
            try fill(4 + length)
            guard buffer.count - start >= 4 + length else { throw FileError(cannot: "read the list of changes back", code: nil, reason: "the file ends inside a change") }
            defer { start += 4 + length }
            return buffer[start + 4..<start + 4 + length]
        }

        /// Buffers `needed` bytes from `start`, or as many as the file has left.
        private mutating func fill(_ needed: Int) throws {
            guard buffer.count - start < needed else { return }
            buffer.removeSubrange(0..<start)
            start = 0
            while buffer.count < needed && offset < spool.size {
                let chunk = Int(min(Int64(max(needed - buffer.count, SpoolFile.bufferSize)), spool.size - offset))
                let old = buffer.count
                buffer.append(contentsOf: repeatElement(0, count: chunk))
                let read = try buffer.withUnsafeMutableBytes { try spool.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: $0[old...])) }
                buffer.removeLast(chunk - read)
                offset += Int64(read)
            }
        }
    }

    /// The fields of one record, in the order `append` put them.
    private struct RecordDecoder {
        package let bytes: ArraySlice<UInt8>
        package var position: Int

        package init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            position = bytes.startIndex
        }

        package mutating func number() -> UInt32 {
            defer { position += 4 }
            return bytes[position..<position + 4].withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
        }

        package mutating func optionalString() -> String? {
            let length = number()
            if length == DescribedChangeFile.absent { return nil }
            defer { position += Int(length) }
            return String(decoding: bytes[position..<position + Int(length)], as: UTF8.self)
        }

        package mutating func string() -> String { optionalString() ?? "" }
    }
}

