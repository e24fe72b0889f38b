import StationCSV
import StationSupport
import Testing

/// The table that records each key's line of an import file, held to a `Dictionary`: keys in
/// key order, as exports list them, and keys out of place.
struct KeyLinesTests {
    /// Random keys of one to three columns, many given twice, recorded into a table sized for
    /// none of them (so it grows nine times) and into one sized for all: both answer as a
    /// `Dictionary` does, for keys present and absent.
    @Test(arguments: [0, 6_000])
    func answersAsADictionary(expected: Int) {
        var random = SplitMix64(seed: 26)
        var table = KeyLines(expected: expected)
        var reference: [RowKey: Int] = [:]
        func randomKey() -> RowKey {
            let columns = Int(random.next() % 3) + 1
            return RowKey((0..<columns).map { _ in Int64(random.next() % 3_000) })
        }
        for line in 1...6_000 {
            let key = randomKey()
            #expect(table.record(key, line: line) == reference[key], "line \(line)")
            if reference[key] == nil { reference[key] = line }
        }
        #expect(table.count == reference.count)
        for _ in 0..<6_000 {
            let key = randomKey()
            #expect(table[key] == reference[key])
        }
        var listed: [RowKey: Int] = [:]
        table.forEach { key, line in listed[key] = line }
        #expect(listed == reference)
    }

    /// A lookup that starts from the last one's place answers as the plain one, whatever the
    /// place: keys in order and out of place, present and absent, below, between and past the
    /// recorded ones, with a place carried over, set before the first key, past the last, or
    /// anywhere.
    @Test func aLookupFromAPlaceAnswersAsOneFromTheMiddle() {
        var random = SplitMix64(seed: 11)
        var table = KeyLines(expected: 100)
        var code: Int64 = 100
        for line in 1...2_000 {
            code += Int64(random.next() % 3) + 1
            // One key in twenty comes out of place, below the keys before it.
            let key = line % 20 == 0 ? RowKey([code - Int64(random.next() % 200) - 1]) : RowKey([code])
            _ = table.record(key, line: line)
        }
        #expect(table.hashedCount > 0)
        var carried = 0
        for round in 0..<20_000 {
            let key = RowKey([Int64(random.next() % UInt64(code + 200))])
            let start = [0, -5, table.count + 9, Int(random.next() % UInt64(table.count + 1))][round % 4]
            var place = start
            #expect(table.contains(key, near: &carried) == (table[key] != nil), "\(key.text) after a carried place")
            #expect(table.contains(key, near: &place) == (table[key] != nil), "\(key.text) from place \(start)")
        }
    }

    /// A file's codes are runs of neighbours (station 1120101, 1120102, …): a million of them
    /// recorded and found again, each with its own line.
    @Test func aMillionNeighbouringCodes() {
        var table = KeyLines(expected: 1_000_000)
        for offset in 0..<1_000_000 {
            #expect(table.record(RowKey([1_120_101 + Int64(offset)]), line: offset + 2) == nil)
        }
        #expect(table.count == 1_000_000)
        var wrong = 0
        for offset in 0..<1_000_000 where table[RowKey([1_120_101 + Int64(offset)])] != offset + 2 { wrong += 1 }
        #expect(wrong == 0)
        #expect(table[RowKey([1_120_100])] == nil)
    }

    /// A file in key order with rows out of place, as a new station listed with its line: keys
    /// given twice, the first time in order or out of place, are found either way, and keys
    /// below, between and above the recorded ones are absent.
    @Test func aFileInKeyOrderWithRowsOutOfPlace() {
        var random = SplitMix64(seed: 7)
        var table = KeyLines(expected: 10)
        var reference: [RowKey: Int] = [:]
        var line = 1
        func record(_ key: RowKey) {
            line += 1
            #expect(table.record(key, line: line) == reference[key], "line \(line): \(key.text)")
            if reference[key] == nil { reference[key] = line }
        }
        for code in stride(from: Int64(1_000), to: 9_000, by: 4) {
            record(RowKey([11_201, code, code + 1]))
            switch random.next() % 8 {
            case 0: record(RowKey([11_201, Int64(random.next() % 8_000) + 1_000, code + 3]))  // out of place
            case 1: record(RowKey([11_201, Int64(random.next() % UInt64(code - 999)) / 4 * 4 + 1_000, 0]))  // out of place, then given again
            case 2: record(RowKey([11_201, code - Int64(random.next() % 40) / 4 * 4, code - Int64(random.next() % 40) / 4 * 4 + 1]))  // in order before: twice
            default: break
            }
        }
        #expect(table.count == reference.count)
        for code in Int64(900)..<9_100 {
            for key in [RowKey([11_201, code, code + 1]), RowKey([11_201, code, code + 3]), RowKey([11_201, code, 0])] {
                #expect(table[key] == reference[key], "\(key.text)")
            }
        }
        var listed: [RowKey: Int] = [:]
        table.forEach { key, line in listed[key] = line }
        #expect(listed == reference)
    }

    /// New stations listed with their lines, whose codes are above every other: each goes to the
    /// hash table, and the keys after it stay in the array (a 1 % import at a million stations
    /// gives 992 such stations).
    @Test func keysAboveTheRestListedAmongThemAreHashedAlone() {
        var table = KeyLines(expected: 20_000)
        var line = 1
        for code in Int64(1_000_000)..<1_020_000 {
            line += 1
            #expect(table.record(RowKey([code]), line: line) == nil)
            if code % 1_000 == 0 {
                line += 1
                #expect(table.record(RowKey([9_900_000 + code / 1_000]), line: line) == nil)
            }
        }
        #expect(table.count == 20_020)
        #expect(table.hashedCount == 20)
        #expect(table[RowKey([9_901_000])] == 3)
        #expect(table.record(RowKey([9_901_000]), line: line + 1) == 3)
        #expect(table.record(RowKey([1_000_500]), line: line + 1) == 503)
    }

    /// An estimate far too large (a file whose first 64 KiB are blank lines) reserves no more
    /// than `largestReservation`, and the table still grows past it when the keys come.
    @Test func aWildEstimateReservesABoundedTable() {
        var table = KeyLines(expected: Int.max)
        for offset in 0..<1_000 { #expect(table.record(RowKey([Int64(offset)]), line: offset + 2) == nil) }
        #expect(table.count == 1_000)
        #expect(table[RowKey([999])] == 1_001)
    }

    /// Keys whose codes fold into the same word (`1` and `1/0/0`) are different keys.
    @Test func keysOfTheSameWordStayApart() {
        var table = KeyLines()
        #expect(table.record(RowKey([1]), line: 2) == nil)
        #expect(table.record(RowKey([1, 0, 0]), line: 3) == nil)
        #expect(table.record(RowKey([1, 0]), line: 4) == nil)
        #expect(table.record(RowKey([1, 0, 0]), line: 5) == 3)
        #expect(table[RowKey([1])] == 2)
        #expect(table[RowKey([1, 0])] == 4)
        #expect(table.count == 3)
    }
}
