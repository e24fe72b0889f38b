import CZlib
import Foundation

/// Joins gzip files that `GzipSink` wrote into one gzip member, without inflating or deflating a
/// byte: each part's deflate data ends on a byte boundary (a sync flush) before an empty final
/// block, so the parts' data, all but the last stripped of that final block, follow one another
/// as one deflate stream; the trailer's CRC-32 is combined from the parts' (`crc32_combine`) and
/// its length is their sum. Every gunzip and zlib reads the result as one member, whatever
/// reads only the first member of a file included.
///
/// A release joins an older release's delta from v with its own delta from that older version
/// into the delta from v (`DeltaChainPlan`): a copy of bytes instead of rendering and
/// compressing the delta again.
package enum GzipJoin {
    /// What a joinable file's deflate data ends with: a sync flush's empty stored block, then
    /// an empty final block with fixed codes.
    private static let syncFlush: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]
    private static let emptyFinalBlock: [UInt8] = [0x03, 0x00]
    private static let trailerSize = 8

    /// The size of the file that joining files of these sizes gives: one header and trailer,
    /// one final block.
    package static func joinedSize(_ sizes: [Int]) -> Int {
        sizes.reduce(0, +) - (sizes.count - 1) * (ParallelGzip.header.count + emptyFinalBlock.count + trailerSize)
    }

    /// Whether the gzip file at `path` can be joined: it has a plain header (no name, comment or
    /// extra field) and its deflate data ends as `GzipSink` ends it. Reads 18 bytes.
    package static func isJoinable(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let tail = syncFlush.count + emptyFinalBlock.count + trailerSize
        guard let head = try? handle.read(upToCount: ParallelGzip.header.count),
              let size = try? handle.seekToEnd(), size >= UInt64(ParallelGzip.header.count + tail) else { return false }
        guard (try? handle.seek(toOffset: size - UInt64(tail))) != nil, let end = try? handle.read(upToCount: tail) else { return false }
        return isPlainHeader(Array(head)) && Array(end.prefix(syncFlush.count + emptyFinalBlock.count)) == syncFlush + emptyFinalBlock
    }

    /// A part as `join` read it.
    package struct JoinedPart: Equatable, Sendable {
        /// SHA-256 of the whole file as read.
        package let sha256: String
        /// The length of its content, from its trailer: modulo 2^32, as gzip keeps it.
        package let contentLength: UInt32
    }

    /// Writes the join of `parts` (paths of joinable gzip files) into `sink`, and finishes it.
    /// Returns each part's SHA-256 and content length, so that the caller can check the bytes it
    /// joined against the manifest that lists them.
    ///
    /// - Throws: `GzipError.corrupt(path)` for a part that is not joinable.
    package static func join(_ parts: [String], into sink: ByteSink) throws -> [JoinedPart] {
        precondition(!parts.isEmpty, "nothing to join")
        try ParallelGzip.header.withUnsafeBytes { try sink.write($0) }
        var crc = crc32(0, nil, 0)
        var length: UInt32 = 0
        var read: [JoinedPart] = []
        for (index, path) in parts.enumerated() {
            let isLast = index == parts.count - 1
            read.append(try MappedFile.withBytes(ofFile: path) { bytes -> JoinedPart in
                let tail = syncFlush.count + emptyFinalBlock.count + trailerSize
                guard bytes.count >= ParallelGzip.header.count + tail, isPlainHeader(Array(bytes.prefix(ParallelGzip.header.count))),
                      Array(bytes[(bytes.count - tail)..<(bytes.count - trailerSize)]) == syncFlush + emptyFinalBlock else {
                    throw GzipError.corrupt(path)
                }
                let dataEnd = bytes.count - trailerSize - (isLast ? 0 : emptyFinalBlock.count)
                try sink.write(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[ParallelGzip.header.count..<dataEnd])))
                let partCRC = littleEndian(bytes, at: bytes.count - trailerSize)
                let partLength = littleEndian(bytes, at: bytes.count - 4)
                // crc32_combine needs the part's length; a gzip trailer keeps it modulo 2^32, which
                // is the length itself for any part under 4 GiB.
                crc = crc32_combine(crc, uLong(partCRC), Int(partLength))
                length &+= partLength
                return JoinedPart(sha256: FileDigest.sha256(UnsafeRawBufferPointer(bytes)), contentLength: partLength)
            })
        }
        var trailer: [UInt8] = []
        for value in [UInt32(truncatingIfNeeded: crc), length] {
            trailer += (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        try trailer.withUnsafeBytes { try sink.write($0) }
        try sink.finish()
        return read
    }

    /// Magic, deflate, no flags: the header is exactly 10 bytes and the data follows it.
    private static func isPlainHeader(_ head: [UInt8]) -> Bool {
        head.count == ParallelGzip.header.count && head[0] == 0x1F && head[1] == 0x8B && head[2] == 8 && head[3] == 0
    }

    private static func littleEndian(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }
}
