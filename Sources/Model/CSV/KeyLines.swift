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
        hasher.combine(word)
    }

    /// The three codes folded into one word: what `hash(into:)` and `KeyLines` hash.
    fileprivate var word: UInt64 {
        UInt64(bitPattern: first) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(bitPattern: second) &* 0x2545_F491_4F6C_DD1D ^ UInt64(bitPattern: third)
    }
}

/// The line of a file on which each key stands: finds a key given twice, the rows a
/// file leaves out, and the line to name in a warning about a row that was not staged.
///
/// An open-addressing table, not a `Dictionary`: every row of an import is recorded here on
/// the thread that compares the file with the master, and `Dictionary` seeds and finalises
/// SipHash for each key. The keys are a file's codes, so a multiply-and-shift of the key's
/// word spreads them well enough.
package struct KeyLines {
    private struct Slot {
        var key: RowKey
        /// 0: the slot is empty. A file's lines start at 1. Four bytes, not eight: a slot then
        /// takes 32 bytes, not 40 (64 MB for a million keys, with room to spare).
        var line: UInt32
    }

    private static let empty = Slot(key: RowKey(count: 1) { _ in 0 }, line: 0)
    private var slots: [Slot]
    package private(set) var count = 0

    /// Room for `expected` keys up front (growing a million-key table rehashes it about twenty
    /// times), but for no more than `largestReservation`: `expected` is an estimate from the start
    /// of a file, and one whose first lines are unlike the rest must not reserve gigabytes.
    /// Past it the table grows.
    package init(expected: Int = 0) {
        slots = Array(repeating: Self.empty, count: Self.capacity(for: min(max(expected, 0), Self.largestReservation)))
    }

    /// 2^21 keys: 128 MB of slots, room for twice the stations of the largest benchmark.
    package static let largestReservation = 1 << 21

    /// A power of two, at most three quarters full with `count` keys.
    private static func capacity(for count: Int) -> Int {
        var capacity = 16
        while capacity / 4 * 3 < count { capacity *= 2 }
        return capacity
    }

    /// The first slot to look at: the high bits of the word times an odd constant (Fibonacci
    /// hashing), so that codes which differ only in their low digits land far apart.
    private func home(of key: RowKey) -> Int {
        Int(truncatingIfNeeded: (key.word &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - slots.count.trailingZeroBitCount))
    }

    /// The slot holding `key`, or the empty slot where it would go.
    private func slot(of key: RowKey) -> Int {
        let mask = slots.count - 1
        var index = home(of: key)
        while slots[index].line != 0 && slots[index].key != key { index = (index + 1) & mask }
        return index
    }

    package subscript(key: RowKey) -> Int? {
        let line = slots[slot(of: key)].line
        return line == 0 ? nil : Int(line)
    }

    /// Every key with its line, in no particular order.
    package func forEach(_ body: (RowKey, Int) throws -> Void) rethrows {
        for slot in slots where slot.line != 0 { try body(slot.key, Int(slot.line)) }
    }

    /// Records a key's line; returns the earlier line if the key was already recorded.
    package mutating func record(_ key: RowKey, line: Int) -> Int? {
        precondition(line > 0 && line <= UInt32.max, "a file's lines start at 1, and a file of four billion lines is not read")
        if (count + 1) > slots.count / 4 * 3 { grow() }
        let index = slot(of: key)
        if slots[index].line != 0 { return Int(slots[index].line) }
        slots[index] = Slot(key: key, line: UInt32(line))
        count += 1
        return nil
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Self.empty, count: old.count * 2)
        for slot in old where slot.line != 0 { slots[self.slot(of: slot.key)] = slot }
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
