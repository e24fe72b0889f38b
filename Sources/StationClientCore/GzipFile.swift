import CZlib
import Crypto
import StationSignatures
import Foundation
import StationFiles

/// A downloaded gzip file inflated, never past the size the signed manifest gives (a gzip bomb
/// stops at that many bytes plus one chunk), with the SHA-256 of what came out. zlib's `gzread`
/// reads concatenated members, as a joined delta is.
enum GzipFile {
    /// Inflates `source` into `destination` (replaced), at most `limit` bytes, calling `progress`
    /// with the bytes written so far after each 64 KiB; returns the output's size and SHA-256.
    /// Past `limit`, the output is removed and `corruptGzip` thrown.
    static func inflate(_ source: String, to destination: String, limit: Int, name: String,
                        progress: (Int) throws -> Void = { _ in }) throws -> (bytes: Int, sha256: String) {
        let output: FileHandle
        do {
            // Replaced, never written through: a link or another user's file there is refused.
            output = FileHandle(fileDescriptor: try OwnFiles.open(destination, flags: O_WRONLY | O_TRUNC, create: true, mode: 0o600), closeOnDealloc: true)
        } catch let refusal as OwnFiles.Refusal {
            throw StationClientError.unsafeFile(path: refusal.path, reason: refusal.reason)
        } catch {
            throw StationClientError.readOnly(database: destination)
        }
        do {
            defer { try? output.close() }
            let result = try inflate(source, limit: limit, name: name) { chunk, total in
                try output.write(contentsOf: chunk)
                try progress(total)
            }
            try output.synchronize()
            return result
        } catch {
            try? FileManager.default.removeItem(atPath: destination)
            throw StationClientError.wrapping(error, path: destination)
        }
    }

    /// Inflates `source` into memory, at most `limit` bytes (a delta's SQL, whose size is signed).
    static func inflate(_ source: String, limit: Int, name: String) throws -> Data {
        var data = Data()
        data.reserveCapacity(limit)
        _ = try inflate(source, limit: limit, name: name) { chunk, _ in data.append(chunk) }
        return data
    }

    private static func inflate(_ source: String, limit: Int, name: String, into consume: (Data, Int) throws -> Void) throws -> (bytes: Int, sha256: String) {
        guard let input = gzopen(source, "rb") else { throw StationClientError.corruptGzip(path: name) }
        defer { gzclose(input) }
        var hasher = SHA256()
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            try Task.checkCancellation()
            let count = buffer.withUnsafeMutableBytes { gzread(input, $0.baseAddress, UInt32($0.count)) }
            if count < 0 { throw StationClientError.corruptGzip(path: name) }
            if count == 0 { break }
            total += Int(count)
            guard total <= limit else { throw StationClientError.corruptGzip(path: name) }
            let chunk = Data(buffer[0..<Int(count)])
            hasher.update(data: chunk)
            try consume(chunk, total)
        }
        return (total, Hex.string(hasher.finalize()))
    }
}
