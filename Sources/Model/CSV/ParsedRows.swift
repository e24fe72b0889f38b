import Foundation
import StationSupport

/// Rows of a CSV file, parsed and checked, in batches: what the import compares with the master.
///
/// A struct, not a class: every field appended to a class's array paid Swift's dynamic
/// exclusivity check (about 2 of the 7.6 CPU-seconds that reading a 1M snapshot took).
package struct ParsedBatch {
    package enum Field {
        case null
        case integer(Int64)
        case real(Double)
        /// Bytes in `text`.
        case text(start: Int, count: Int)
    }

    package var lines: [Int] = []
    /// `fieldsPerRow` fields per row, row after row.
    package var fields: [Field] = []
    package var text: [UInt8] = []
    package var count: Int { lines.count }

    package init(capacity: Int, fieldsPerRow: Int) {
        lines.reserveCapacity(capacity)
        fields.reserveCapacity(capacity * fieldsPerRow)
        text.reserveCapacity(capacity * 64)
    }

    /// Empties the batch for the next rows, keeping its memory.
    package mutating func removeAll() {
        lines.removeAll(keepingCapacity: true)
        fields.removeAll(keepingCapacity: true)
        text.removeAll(keepingCapacity: true)
    }
}

/// A chunk of a file's records on its way from the thread that parses them to the import's:
/// checked there into `rows` (and `badRows`), or left for the import's thread to check, when that
/// thread was waiting for it (`isChecked` false): whichever thread has time checks the rows.
package struct ReadChunk: Sendable {
    package var records = RecordChunk()
    package var rows: ParsedBatch
    /// The rows a column's rule refused, in the order of the file.
    package var badRows: [InputError] = []
    package var isChecked = false
    /// The chunk starts with the file's header, which is not a row.
    package var startsWithHeader = false

    package init(rowCapacity: Int, fieldsPerRow: Int) { rows = ParsedBatch(capacity: rowCapacity, fieldsPerRow: fieldsPerRow) }

    /// Empties the chunk for the next records, keeping its memory.
    package mutating func removeAll() {
        records.removeAll()
        rows.removeAll()
        badRows.removeAll()
        isChecked = false
        startsWithHeader = false
    }
}

extension ParsedBatch.Field {
    package var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }
}
