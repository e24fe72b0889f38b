import StationCSV
import StationSupport
import Testing

/// The table that records each key's line of an import file, held to a `Dictionary`.
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
