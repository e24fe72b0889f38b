import CZlib
import Crypto
import Foundation

/// zlib refused to compress or inflate.
public enum GzipError: Error, LocalizedError {
    case zlib(Int32)
    case corrupt(String)

    public var errorDescription: String? {
        switch self {
        case .zlib(let status): return "zlib failed with status \(status)"
        case .corrupt(let path): return "\(path): not a valid gzip file"
        }
    }
}

/// Reads gzip files (zlib's gzread).
public enum Gunzip {
    /// The whole inflated content of a (small) gzip file.
    public static func read(_ path: String) throws -> Data {
        var result = Data()
        try inflate(path) { result.append(contentsOf: $0) }
        return result
    }

    /// The inflated content of gzip bytes in memory (`serve` answers a client that does not
    /// accept gzip with a delta's SQL).
    ///
    /// - Throws: `GzipError.corrupt(name)` for bytes that are not one whole gzip member: a decoder
    ///   that reads only the first member (as some phones' do) would miss what follows it.
    public static func inflate(_ gzip: Data, name: String) throws -> Data {
        var stream = z_stream()
        // inflateInit2 is a macro Swift cannot import; 31 window bits = 15 + gzip header.
        guard inflateInit2_(&stream, 31, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { throw GzipError.corrupt(name) }
        defer { inflateEnd(&stream) }
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        try gzip.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = uInt(input.count)
            while true {
                let status = buffer.withUnsafeMutableBytes { out -> Int32 in
                    stream.next_out = out.bindMemory(to: Bytef.self).baseAddress
                    stream.avail_out = uInt(out.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                guard status == Z_OK || status == Z_STREAM_END else { throw GzipError.corrupt(name) }
                output.append(contentsOf: buffer[0..<(buffer.count - Int(stream.avail_out))])
                if status == Z_STREAM_END {
                    if stream.avail_in != 0 { throw GzipError.corrupt(name) }
                    return
                }
                if stream.avail_in == 0 && stream.avail_out != 0 { throw GzipError.corrupt(name) }
            }
        }
        return output
    }

    /// Streams the inflated content of a gzip file, of any size, into `sink`, and finishes it
    /// unless told not to (more is to follow).
    package static func inflate(_ path: String, into sink: ByteSink, finishing: Bool = true) throws {
        try inflate(path) { try sink.write($0) }
        if finishing { try sink.finish() }
    }

    private static func inflate(_ path: String, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let file = gzopen(path, "rb") else { throw GzipError.corrupt(path) }
        defer { gzclose(file) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { gzread(file, $0.baseAddress, UInt32($0.count)) }
            if count < 0 { throw GzipError.corrupt(path) }
            if count == 0 { break }
            try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[0..<Int(count)])) }
        }
    }
}
