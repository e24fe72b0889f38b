/// A master row's key: the one, two or three integer codes of its key columns.
///
/// Stored inline, not as an array: an import keeps a million of them. Ordered as SQLite
/// orders the key columns (integers, column after column).
package struct RowKey: Hashable, Comparable {
    private let first: Int64
    private let second: Int64
    private let third: Int64
    private let count: Int8

    package init(_ values: [Int64]) {
        precondition((1...3).contains(values.count), "master keys have one to three columns")
        first = values[0]
        second = values.count > 1 ? values[1] : 0
        third = values.count > 2 ? values[2] : 0
        count = Int8(values.count)
    }

    package init(count: Int, value: (Int) -> Int64) {
        first = value(0)
        second = count > 1 ? value(1) : 0
        third = count > 2 ? value(2) : 0
        self.count = Int8(count)
    }

    package var values: [Int64] { Array([first, second, third].prefix(Int(count))) }

    /// The code of key column `column` (0, 1 or 2), without the array `values` builds.
    package subscript(column: Int) -> Int64 { column == 0 ? first : column == 1 ? second : third }

    /// As in `updates.key_id` and in messages: `11201/1120101/1120102`.
    package var text: String { values.map(String.init).joined(separator: "/") }

    package static func < (left: RowKey, right: RowKey) -> Bool {
        (left.first, left.second, left.third) < (right.first, right.second, right.third)
    }

    /// One word for the hasher, not four: hashing a file's keys was a tenth of a change
    /// import's comparing thread. Keys whose words are equal share a bucket chain; codes are
    /// curated data, so such keys are rare, and they cost time, never a wrong answer.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(UInt64(bitPattern: first) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: second) &* 0x2545_F491_4F6C_DD1D ^ UInt64(bitPattern: third))
    }
}

/// The line of a file on which each key stands: finds a key given twice, the rows a
/// file leaves out, and the line to name in a warning about a row that was not staged.
package struct KeyLines {
    private var lines: [RowKey: Int]

    /// Room for `expected` keys up front: growing a million-key table rehashes it about twenty times.
    package init(expected: Int = 0) { lines = Dictionary(minimumCapacity: expected) }

    package subscript(key: RowKey) -> Int? { lines[key] }

    package var count: Int { lines.count }

    /// Every key with its line, in no particular order.
    package func forEach(_ body: (RowKey, Int) throws -> Void) rethrows {
        for (key, line) in lines { try body(key, line) }
    }

    /// Records a key's line; returns the earlier line if the key was already recorded.
    package mutating func record(_ key: RowKey, line: Int) -> Int? {
        lines.updateValue(line, forKey: key).map { earlier in
            lines[key] = earlier
            return earlier
        }
    }

    /// Records a key's line.
    ///
    /// - Throws: `CSVError` naming both lines when `file` gave the key before.
    package mutating func recordOnce(_ key: RowKey, line: Int, of file: ImportFile) throws {
        if let firstLine = record(key, line: line) {
            throw CSVError(
                file: file.displayName, line: line,
                message: "duplicate key \(file.table.keyColumns.joined(separator: "/")) \(key.text), already on line \(firstLine) (expected each key once per file)")
        }
    }
}
