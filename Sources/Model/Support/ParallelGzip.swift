import CZlib
import Crypto
import Foundation

/// Gzip of a whole buffer on every core, the way pigz does it: the input is cut into 1 MiB
/// blocks, each deflated on its own but primed with the 32 KiB before it (so matches reach
/// across the cut, and the ratio stays that of one stream), and ended on a byte boundary with
/// a sync flush, so that the blocks join into one deflate stream in one gzip member that every
/// gunzip and zlib reads. Where the cuts fall does not depend on the number of cores: the same
/// bytes in give the same bytes out on any machine.
///
/// A release's database is the largest thing a release writes: on one core its gzip was the
/// longest step of a release while the other core only hashed.
package enum ParallelGzip {
    package static let blockSize = 1 << 20
    package static let dictionarySize = 32 << 10
    /// gzip header: magic, deflate, no flags, mtime 0 (reproducible), no extra flags, Unix.
    package static let header: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]

    /// Compresses `input` with `settings` into `sink`, which sees the gzip bytes in order;
    /// `eachInputBlock` sees the input in order too (to hash it in the same pass). A block of
    /// `deflatedAhead` is used as it is when the bytes it was made from are still `input`'s;
    /// the output is the same bytes either way. Returns how many blocks were taken from it.
    @discardableResult
    package static func compress(_ input: UnsafeRawBufferPointer, settings: GzipSettings, into sink: ByteSink,
                                 deflatedAhead: [Int: DeflatedBlock] = [:],
                                 eachInputBlock: (UnsafeRawBufferPointer) throws -> Void = { _ in }) throws -> Int {
        let blocks = max(1, (input.count + blockSize - 1) / blockSize)
        // Blocks in flight: enough to keep every core busy, few enough to bound the memory.
        let round = 2 * ProcessInfo.processInfo.activeProcessorCount
        try header.withUnsafeBytes { try sink.write($0) }
        var crc = crc32(0, nil, 0)
        var first = 0
        var taken = 0
        while first < blocks {
            let count = min(round, blocks - first)
            let start = first
            let results = ConcurrentWork.results(count: count) { offset -> (block: CompressedBlock, wasAhead: Bool) in
                let index = start + offset
                let isLast = index == blocks - 1
                if !isLast, let ahead = deflatedAhead[index], ahead.isMade(from: span(of: index, in: input)) {
                    return (CompressedBlock(bytes: ahead.bytes, crc: ahead.crc), true)
                }
                return (try deflateBlock(input, index: index, isLast: isLast, settings: settings), false)
            }
            for (offset, result) in results.enumerated() {
                let (block, wasAhead) = try result.get()
                if wasAhead { taken += 1 }
                try block.bytes.withUnsafeBytes { try sink.write($0) }
                let range = bounds(of: first + offset, in: input.count)
                try eachInputBlock(UnsafeRawBufferPointer(rebasing: input[range]))
                crc = crc32_combine(crc, block.crc, Int(range.count))
            }
            first += count
        }
        // Trailer: CRC-32 and the input's length modulo 2^32, both little-endian.
        var trailer = [UInt8]()
        for value in [UInt32(truncatingIfNeeded: crc), UInt32(truncatingIfNeeded: input.count)] {
            trailer += (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        try trailer.withUnsafeBytes { try sink.write($0) }
        try sink.finish()
        return taken
    }

    private struct CompressedBlock {
        package let bytes: [UInt8]
        package let crc: uLong
    }

    private static func bounds(of index: Int, in count: Int) -> Range<Int> {
        let start = index * blockSize
        return start..<min(start + blockSize, count)
    }

    /// The bytes a block's deflate reads: the dictionary before it, then the block.
    private static func span(of index: Int, in input: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let range = bounds(of: index, in: input.count)
        return UnsafeRawBufferPointer(rebasing: input[max(0, range.lowerBound - dictionarySize)..<range.upperBound])
    }

    /// Deflates block `index` of a file that is still being written (not the last block), from
    /// its bytes as they are now; nil when the file is not that long yet.
    package static func deflateAhead(_ file: FileHandle, index: Int, settings: GzipSettings) throws -> DeflatedBlock? {
        precondition(index > 0, "the first block holds a file's header, which changes last")
        let start = index * blockSize - dictionarySize
        let count = dictionarySize + blockSize
        var span = [UInt8](repeating: 0, count: count)
        let read = span.withUnsafeMutableBytes { pread(file.fileDescriptor, $0.baseAddress, count, off_t(start)) }
        guard read == count else { return nil }
        return try span.withUnsafeBytes { span in
            // The block is the span's last part; its dictionary the part before.
            let block = try deflateRange(span, range: dictionarySize..<count, isLast: false, settings: settings)
            return DeflatedBlock(bytes: block.bytes, crc: block.crc, spanDigest: Array(SHA256.hash(data: span)))
        }
    }

    private static func deflateBlock(_ input: UnsafeRawBufferPointer, index: Int, isLast: Bool, settings: GzipSettings) throws -> CompressedBlock {
        try deflateRange(input, range: bounds(of: index, in: input.count), isLast: isLast, settings: settings)
    }

    /// Deflates `input[range]` primed with the `dictionarySize` bytes before it.
    private static func deflateRange(_ input: UnsafeRawBufferPointer, range: Range<Int>, isLast: Bool, settings: GzipSettings) throws -> CompressedBlock {
        var stream = z_stream()
        // -15 window bits: raw deflate; the gzip header and trailer are written once, around all blocks.
        var status = deflateInit2_(&stream, settings.level, Z_DEFLATED, -15, settings.memoryLevel, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw GzipError.zlib(status) }
        defer { deflateEnd(&stream) }
        let base = input.baseAddress.map { $0.assumingMemoryBound(to: Bytef.self) }
        if let base, range.lowerBound > 0 {
            let dictionary = max(0, range.lowerBound - dictionarySize)
            status = deflateSetDictionary(&stream, base + dictionary, uInt(range.lowerBound - dictionary))
            guard status == Z_OK else { throw GzipError.zlib(status) }
        }
        // Room for the worst case and the sync flush's empty stored block.
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(range.count))) + 64)
        stream.next_in = base.map { UnsafeMutablePointer(mutating: $0 + range.lowerBound) }
        stream.avail_in = uInt(range.count)
        let produced = output.withUnsafeMutableBufferPointer { buffer -> Int in
            stream.next_out = buffer.baseAddress
            stream.avail_out = uInt(buffer.count)
            status = deflate(&stream, isLast ? Z_FINISH : Z_SYNC_FLUSH)
            return buffer.count - Int(stream.avail_out)
        }
        guard status == (isLast ? Z_STREAM_END : Z_OK), stream.avail_in == 0, stream.avail_out > 0 else { throw GzipError.zlib(status) }
        output.removeSubrange(produced...)
        let crc = base.map { crc32(0, $0 + range.lowerBound, uInt(range.count)) } ?? crc32(0, nil, 0)
        return CompressedBlock(bytes: output, crc: crc)
    }
}

/// A block deflated before its file was finished (`ParallelGzip.deflateAhead`), with the
/// digest of the bytes it was made from (the dictionary before it and itself): it stands for
/// the block only while the file still holds those bytes.
package struct DeflatedBlock: Sendable {
    fileprivate let bytes: [UInt8]
    fileprivate let crc: uLong
    fileprivate let spanDigest: [UInt8]

    fileprivate func isMade(from span: UnsafeRawBufferPointer) -> Bool {
        Array(SHA256.hash(data: span)) == spanDigest
    }
}


extension ParallelGzip {
    /// Gzips a file into another on every core (`compress(_:settings:into:…)`), hashing both in the same read;
    /// with the blocks `DeflatingAhead` made while the file was being finished.
    package static func compress(file source: String, to destination: String,
                                 deflatedAhead: [Int: DeflatedBlock] = [:])
        throws -> (sourceSha256: String, bytes: Int, sha256: String, blocksTakenAhead: Int) {
        let digest = DigestSink(next: try FileSink(path: destination))
        let raw = DigestSink()
        // Mapped, not read into a buffer of the database's size (`MappedFile`).
        let taken = try MappedFile.withBytes(ofFile: source) { bytes in
            try ParallelGzip.compress(UnsafeRawBufferPointer(bytes), settings: .database, into: digest,
                                      deflatedAhead: deflatedAhead, eachInputBlock: raw.write)
        }
        try raw.finish()
        return (raw.sha256, digest.byteCount, digest.sha256, taken)
    }
}
