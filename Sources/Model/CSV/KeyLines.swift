import StationSupport
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

    /// The column count last: keys of one table have the same count, and `1` and `1/0/0`, which
    /// are different keys, are then ordered too.
    package static func < (left: RowKey, right: RowKey) -> Bool {
        (left.first, left.second, left.third, left.count) < (right.first, right.second, right.third, right.count)
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
/// Exports list their rows in key order, so the keys that come in order are appended to an
/// array, and only those that come out of place go to a hash table. A hash table of every key
/// would cost a cache miss per key in 64 MB at a million stations: the array is written in
/// order, and the hash table of the few keys out of place stays in the cache.
package struct KeyLines {
    private var ordered: [KeyLine] = []
    private var outOfPlace = HashedKeyLines()
    package var count: Int { ordered.count + outOfPlace.count }
    /// The keys held in the hash table: those that came out of place, or were passed by one.
    package var hashedCount: Int { outOfPlace.count }

    /// How many of the last keys in order a key below them takes the place of, which then go to
    /// the hash table. A new station listed with its line has a code above those that follow it:
    /// kept last in the array, it would send every key after it to the hash table.
    package static let reach = 32

    /// Room for `expected` keys in order up front, but for no more than `largestReservation`:
    /// `expected` is an estimate from the start of a file, and one whose first lines are unlike
    /// the rest must not reserve gigabytes. Past it the array grows.
    package init(expected: Int = 0) {
        ordered.reserveCapacity(min(max(expected, 0), Self.largestReservation))
    }

    /// 2^21 keys: 64 MB, room for twice the stations of the largest benchmark.
    package static let largestReservation = 1 << 21

    package subscript(key: RowKey) -> Int? {
        let index = orderedIndex(of: key)
        if index < ordered.count && ordered[index].key == key { return Int(ordered[index].line) }
        return outOfPlace.isEmpty ? nil : outOfPlace[key]
    }

    /// Whether `key` was recorded, looked for from `hint` outward, not from the middle: a caller
    /// that asks for keys near one another in key order (a file of connections, whose stations
    /// come line after line in code order) takes a step or two a key where a binary search over
    /// a million takes twenty, each a cache miss. `hint` is where the search ended, for the next.
    package func contains(_ key: RowKey, near hint: inout Int) -> Bool {
        hint = orderedIndex(of: key, near: hint)
        if hint < ordered.count && ordered[hint].key == key { return true }
        return !outOfPlace.isEmpty && outOfPlace[key] != nil
    }

    /// Every key with its line, in no particular order.
    package func forEach(_ body: (RowKey, Int) throws -> Void) rethrows {
        for entry in ordered { try body(entry.key, Int(entry.line)) }
        try outOfPlace.forEach(body)
    }

    /// Records a key's line; returns the earlier line if the key was already recorded.
    package mutating func record(_ key: RowKey, line: Int) -> Int? {
        precondition(line > 0 && line <= UInt32.max, "a file's lines start at 1, and a file of four billion lines is not read")
        let entry = KeyLine(key: key, line: UInt32(line))
        if let last = ordered.last, !(last.key < key) {
            let index = orderedIndex(of: key)
            if ordered[index].key == key { return Int(ordered[index].line) }
            if let earlier = outOfPlace[key] { return earlier }
            guard ordered.count - index <= Self.reach else { return outOfPlace.record(entry) }
            for passed in ordered[index...] { _ = outOfPlace.record(passed) }
            ordered.removeSubrange(index...)
        } else if !outOfPlace.isEmpty, let earlier = outOfPlace[key] {
            return earlier
        }
        ordered.append(entry)
        return nil
    }

    /// Records a key's line.
    ///
    /// - Throws: `InputError` naming both lines when `file` gave the key before.
    package mutating func recordOnce(_ key: RowKey, line: Int, of file: ImportFile) throws {
        if let firstLine = record(key, line: line) {
            throw InputError(.csv, file: file.displayName, line: line,
                message: "duplicate key \(file.table.keyColumns.joined(separator: "/")) \(key.text), already on line \(firstLine) (expected each key once per file)")
        }
    }

    /// Where `key` is or would go among the keys in order.
    private func orderedIndex(of key: RowKey) -> Int {
        orderedIndex(of: key, between: 0, and: ordered.count)
    }

    /// Where `key` is or would go, found by steps doubling away from `hint` (a galloping search)
    /// until they pass it, then halving between the last two.
    private func orderedIndex(of key: RowKey, near hint: Int) -> Int {
        let start = min(max(hint, 0), ordered.count)
        var step = 1
        if start < ordered.count && ordered[start].key < key {
            var low = start + 1
            while start + step < ordered.count {
                guard ordered[start + step].key < key else { return orderedIndex(of: key, between: low, and: start + step) }
                low = start + step + 1
                step *= 2
            }
            return orderedIndex(of: key, between: low, and: ordered.count)
        }
        var high = start
        while start - step >= 0 {
            guard !(ordered[start - step].key < key) else { return orderedIndex(of: key, between: start - step + 1, and: high) }
            high = start - step
            step *= 2
        }
        return orderedIndex(of: key, between: 0, and: high)
    }

    /// Where `key` is or would go, knowing that it is at `low` or after, and at `high` or before.
    private func orderedIndex(of key: RowKey, between low: Int, and high: Int) -> Int {
        var (low, high) = (low, high)
        while low < high {
            let middle = (low + high) / 2
            if ordered[middle].key < key { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// A key and its line: four bytes, not eight, for the line, so that an entry takes 32 bytes, not 40.
private struct KeyLine {
    var key: RowKey
    /// 0: an empty slot of `HashedKeyLines`. A file's lines start at 1.
    var line: UInt32
}

/// The keys a file gives out of place. An open-addressing table, not a `Dictionary`:
/// `Dictionary` seeds and finalises SipHash for each key. The keys are a file's codes, so a
/// multiply-and-shift of the key's word spreads them well enough.
private struct HashedKeyLines {
    private static let empty = KeyLine(key: RowKey(count: 1) { _ in 0 }, line: 0)
    private var slots = Array(repeating: Self.empty, count: 16)
    private(set) var count = 0

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

    subscript(key: RowKey) -> Int? {
        let line = slots[slot(of: key)].line
        return line == 0 ? nil : Int(line)
    }

    func forEach(_ body: (RowKey, Int) throws -> Void) rethrows {
        for slot in slots where slot.line != 0 { try body(slot.key, Int(slot.line)) }
    }

    var isEmpty: Bool { count == 0 }

    /// Records a key's line; returns the earlier line if the key was already recorded.
    mutating func record(_ entry: KeyLine) -> Int? {
        // At most three quarters full.
        if (count + 1) > slots.count / 4 * 3 { grow() }
        let index = slot(of: entry.key)
        if slots[index].line != 0 { return Int(slots[index].line) }
        slots[index] = entry
        count += 1
        return nil
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Self.empty, count: old.count * 2)
        for slot in old where slot.line != 0 { slots[self.slot(of: slot.key)] = slot }
    }
}
