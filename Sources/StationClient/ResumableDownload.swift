import Crypto
import StationSignatures
import Foundation

/// A file the manifest lists, downloaded into `destination` in ranges of `chunkBytes`: each part is
/// appended to `destination.part` and synced, so a download cut (a lost connection, a killed app)
/// resumes where it stopped, with `If-Range` so that a file changed meanwhile starts over. The
/// size is capped before anything is asked, and the SHA-256 checked before the file is used.
struct ResumableDownload {
    let source: any ReleaseSource
    let chunkBytes: Int
    let limit: Int

    /// What one download did: the bytes it fetched, and where it resumed (0: from the start).
    struct Outcome: Equatable {
        var downloaded = 0
        var resumedAt = 0
    }

    func fetch(_ file: ReleaseIndex.File, to destination: String, onPart: (Int) throws -> Void) async throws -> Outcome {
        guard file.bytes <= limit else { throw StationClientError.tooLarge(path: file.path, bytes: file.bytes, limit: limit) }
        // Finished before a kill: checked again, not fetched again.
        if FileManager.default.fileExists(atPath: destination) {
            if (try? Self.sha256(ofFile: destination)) == file.sha256 { return Outcome(resumedAt: file.bytes) }
            try? FileManager.default.removeItem(atPath: destination)
        }
        let part = destination + ".part", validatorPath = part + ".validator"
        var offset = Self.size(of: part) ?? 0
        if offset > file.bytes { offset = 0 }
        var validator = offset > 0 ? (try? String(contentsOfFile: validatorPath, encoding: .utf8)) : nil
        if offset == 0 {
            guard FileManager.default.createFile(atPath: part, contents: nil) else {
                throw StationClientError.database("\(part): cannot be written")
            }
            try? FileManager.default.removeItem(atPath: validatorPath)
        }
        var outcome = Outcome(resumedAt: offset)
        while offset < file.bytes {
            let length = min(chunkBytes, file.bytes - offset)
            let answer = try await source.read(file.path, from: offset, length: length, ifRange: validator)
            guard let handle = FileHandle(forWritingAtPath: part) else { throw StationClientError.database("\(part): cannot be written") }
            if answer.isWholeFile {
                // The server sent the whole file (it changed, or ignores ranges): start over with it.
                try handle.truncate(atOffset: 0)
                offset = 0
                outcome.resumedAt = 0
            } else {
                try handle.seek(toOffset: UInt64(offset))
            }
            guard offset + answer.data.count <= file.bytes else {
                try? handle.close()
                try? FileManager.default.removeItem(atPath: part)
                throw StationClientError.sizeDiffers(path: file.path, actual: offset + answer.data.count, expected: file.bytes)
            }
            guard !answer.data.isEmpty else {
                try? handle.close()
                throw StationClientError.sizeDiffers(path: file.path, actual: offset, expected: file.bytes)
            }
            try handle.write(contentsOf: answer.data)
            try handle.synchronize()
            try handle.close()
            if offset == 0, let tag = answer.validator, tag.hasPrefix("\"") {
                // Only a strong validator may be resumed against (RFC 9110, 13.1.5).
                try? tag.write(toFile: validatorPath, atomically: true, encoding: .utf8)
                validator = tag
            }
            offset += answer.data.count
            outcome.downloaded += answer.data.count
            try onPart(offset)
        }
        guard try Self.sha256(ofFile: part) == file.sha256 else {
            try? FileManager.default.removeItem(atPath: part)
            throw StationClientError.hashDiffers(path: file.path)
        }
        try FileManager.default.moveItem(atPath: part, toPath: destination)
        try? FileManager.default.removeItem(atPath: validatorPath)
        return outcome
    }

    static func size(of path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
    }

    static func sha256(ofFile path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw StationClientError.database("\(path): cannot be read") }
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
        return Hex.string(hasher.finalize())
    }
}
