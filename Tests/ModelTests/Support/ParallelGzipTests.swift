import Foundation
import StationCSV
import StationLog
import StationRelease
import StationReview
import StationSchema
import StationSupport
import StationSynth
import Testing

/// The release database's gzip, made on every core: one valid gzip member that the real
/// `gzip` and zlib read back byte for byte, the same bytes on every run, at the ratio of one
/// stream.
@Suite struct ParallelGzipTests {
    let scratch = Scratch()

    /// SQL-like text (what a database page mostly holds is not random), long enough to span
    /// blocks: a linear congruential generator keeps it the same on every run.
    static func text(bytes: Int) -> Data {
        var state: UInt64 = 42
        var data = Data()
        while data.count < bytes {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            data += Data("INSERT INTO stations VALUES (\(state >> 44), 'station \(state >> 58)', \(state % 1000));\n".utf8)
        }
        return data.prefix(bytes)
    }

    static let inputs: [(String, Data)] = [
        ("empty", Data()),
        ("one byte", Data([0x41])),
        ("two whole blocks", text(bytes: 2 * ParallelGzip.blockSize)),
        ("three and a half blocks", text(bytes: 7 * ParallelGzip.blockSize / 2)),
    ]

    @Test(arguments: inputs.map(\.0)) func gzipAndZlibReadBackTheInput(_ name: String) throws {
        let input = Self.inputs.first { $0.0 == name }!.1
        let gzip = scratch.path("\(name).gz")
        let digest = DigestSink(next: try FileSink(path: gzip))
        _ = try input.withUnsafeBytes { try ParallelGzip.compress($0, settings: .database, into: digest) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: gzip)).count == digest.byteCount)

        #expect(try Gunzip.read(gzip) == input)
        let test = try CommandRunner.run(["gzip", "-t", gzip], program: URL(fileURLWithPath: "/usr/bin/env"))
        #expect(test.status == 0, "\(test.stderr)")
        let unzip = try CommandRunner.run(["gzip", "-d", gzip], program: URL(fileURLWithPath: "/usr/bin/env"))
        #expect(unzip.status == 0, "\(unzip.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.path(name))) == input)
    }

    /// Blocks deflated while the file was still being written stand for the finished file's
    /// only where it holds the bytes they were made from (the block and the 32 KiB before it):
    /// the gzip is the bytes of one made from the finished file alone.
    @Test func blocksDeflatedAheadAreTakenOnlyWhereTheFileIsUnchanged() throws {
        let path = scratch.path("growing.sqlite")
        let blockSize = ParallelGzip.blockSize
        var content = Self.text(bytes: 5 * blockSize + 100)
        try content.write(to: URL(fileURLWithPath: path))
        let ahead = DeflatingAhead(file: path, settings: .database).finish(waitingForEveryBlock: true)
        // Whole blocks after the first, up to the size then: 1 to 4 (5 is not whole).
        #expect(Set(ahead.keys) == [1, 2, 3, 4])

        // The file is finished: its first block (a header) and the dictionary of block 3 (the
        // end of block 2) change, and more is appended.
        content[10] ^= 0xFF
        content[3 * blockSize - 5] ^= 0xFF
        content += Self.text(bytes: blockSize / 2)
        try content.write(to: URL(fileURLWithPath: path))

        let alone = scratch.path("alone.gz")
        let withAhead = scratch.path("ahead.gz")
        _ = try ParallelGzip.compress(file: path, to: alone)
        let made = try ParallelGzip.compress(file: path, to: withAhead, deflatedAhead: ahead)
        #expect(try Data(contentsOf: URL(fileURLWithPath: withAhead)) == Data(contentsOf: URL(fileURLWithPath: alone)))
        #expect(try Gunzip.read(withAhead) == content)
        // Blocks 1 and 4 are taken; 2 changed, and 3's dictionary did.
        #expect(made.blocksTakenAhead == 2)
    }

    @Test func theSameInputGivesTheSameBytesAtTheRatioOfOneStream() throws {
        let input = Self.text(bytes: 7 * ParallelGzip.blockSize / 2)
        var outputs: [Data] = []
        for run in 0..<2 {
            let path = scratch.path("run\(run).gz")
            _ = try input.withUnsafeBytes { try ParallelGzip.compress($0, settings: .database, into: try FileSink(path: path)) }
            outputs.append(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        #expect(outputs[0] == outputs[1])

        let single = scratch.path("single.gz")
        let counter = DigestSink(next: try FileSink(path: single))
        let gzip = try GzipSink(next: counter, settings: .database)
        try input.withUnsafeBytes { try gzip.write($0) }
        try gzip.finish()
        // Primed with the 32 KiB before it, each block compresses as if the stream went on.
        #expect(Double(outputs[0].count) <= Double(counter.byteCount) * 1.01, "\(outputs[0].count) against \(counter.byteCount)")
    }
}
