import CZlib
import Crypto
import StationSignatures
import Foundation

/// A downloaded gzip file inflated into another, with the SHA-256 of what came out (zlib's
/// `gzread` reads concatenated members, as a joined delta is).
enum GzipFile {
    /// Inflates `source` into `destination` (replaced), calling `progress` with the bytes written
    /// so far after each 64 KiB; returns the output's size and SHA-256.
    static func inflate(_ source: String, to destination: String, progress: (Int) throws -> Void = { _ in }) throws -> (bytes: Int, sha256: String) {
        guard let input = gzopen(source, "rb") else { throw StationClientError.corruptGzip(source) }
        defer { gzclose(input) }
        guard FileManager.default.createFile(atPath: destination, contents: nil), let output = FileHandle(forWritingAtPath: destination) else {
            throw StationClientError.database("\(destination): cannot be written")
        }
        defer { try? output.close() }
        var hasher = SHA256()
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { gzread(input, $0.baseAddress, UInt32($0.count)) }
            if count < 0 { throw StationClientError.corruptGzip(source) }
            if count == 0 { break }
            let chunk = Data(buffer[0..<Int(count)])
            hasher.update(data: chunk)
            try output.write(contentsOf: chunk)
            total += Int(count)
            try progress(total)
        }
        try output.synchronize()
        return (total, Hex.string(hasher.finalize()))
    }
}
