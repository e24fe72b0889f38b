import Crypto
import Foundation
import StationFiles
import StationManifest
import StationSignatures

/// A file the manifest lists, downloaded into `destination` in ranges of `chunkBytes`: each part
/// is streamed to `destination.part` and synced, so a download cut (a lost connection, a killed
/// app) resumes where it stopped, with `If-Range` so that a file changed meanwhile starts over.
/// No answer is read past the bytes the manifest gives (an endless body is cut there), the size
/// is capped before anything is asked, and the SHA-256 checked before the file is used.
package struct ResumableDownload {
    let source: any ReleaseSource
    let chunkBytes: Int
    let limit: Int
    let limits: TransferLimits

    /// What one download did: the bytes it fetched, and where it resumed (0: from the start).
    struct Outcome: Equatable {
        var downloaded = 0
        var resumedAt = 0
    }

    /// Downloads `file`; `progress` is told the bytes on disk after each chunk that arrives,
    /// `onPart` after each synced part.
    func fetch(_ file: ReleaseIndex.File, to destination: String, progress: @escaping @Sendable (Int) -> Void,
               onPart: (Int) throws -> Void) async throws -> Outcome {
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
            close(try Self.openPart(part, flags: O_WRONLY | O_TRUNC, create: true))
            try? FileManager.default.removeItem(atPath: validatorPath)
        }
        var outcome = Outcome(resumedAt: offset)
        while offset < file.bytes {
            try Task.checkCancellation()
            let state = try await fetchChunk(of: file, into: part, at: offset, validator: validator, progress: progress)
            if state.restarted { outcome.resumedAt = 0 }
            guard state.end > offset || state.restarted else {
                throw StationClientError.sizeDiffers(path: file.path, actual: offset, expected: file.bytes)
            }
            if state.start == 0, let tag = state.validator, tag.hasPrefix("\"") {
                // Only a strong validator may be resumed against (RFC 9110, 13.1.5).
                try? tag.write(toFile: validatorPath, atomically: true, encoding: .utf8)
                validator = tag
            }
            outcome.downloaded += state.end - state.start
            offset = state.end
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

    /// One chunk from `offset` appended to the part file and synced; what arrived of a failed
    /// read is kept, synced, for the next try (it is checked by hash in the end).
    private func fetchChunk(of file: ReleaseIndex.File, into part: String, at offset: Int, validator: String?,
                            progress: @escaping @Sendable (Int) -> Void) async throws -> PartWriter.State {
        let length = min(chunkBytes, file.bytes - offset)
        let handle = FileHandle(fileDescriptor: try Self.openPart(part, flags: O_WRONLY), closeOnDealloc: false)
        let writer = PartWriter(handle: handle, path: file.path, offset: offset, rangeEnd: offset + length,
                                fileBytes: file.bytes, progress: progress)
        do {
            try await source.read(SourceRequest(path: file.path, offset: offset, length: length, ifRange: validator, maximumBytes: file.bytes,
                                                limits: limits),
                                  into: writer.receive)
        } catch {
            try? handle.synchronize()
            try? handle.close()
            if case StationClientError.sizeDiffers = error { try? FileManager.default.removeItem(atPath: part) }
            throw StationClientError.wrapping(error, path: part)
        }
        do {
            try handle.synchronize()
            try handle.close()
        } catch {
            throw StationClientError.wrapping(error, path: part)
        }
        return writer.state
    }

    /// The part file, never through a link nor another user's: one planted as a link to another
    /// file would be written through from the resumed offset.
    private static func openPart(_ part: String, flags: Int32, create: Bool = false) throws -> Int32 {
        do {
            return try OwnFiles.open(part, flags: flags, create: create, mode: 0o600)
        } catch let refusal as OwnFiles.Refusal {
            throw StationClientError.unsafeFile(path: refusal.path, reason: refusal.reason)
        } catch let error as OwnFiles.SystemError {
            if error.code == ENOSPC { throw StationClientError.storageFull(path: part, cause: POSIXError(.ENOSPC)) }
            throw StationClientError.readOnly(database: part)
        }
    }

    static func size(of path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
    }

    package static func sha256(ofFile path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw StationClientError.database(path: path, cause: POSIXError(.ENOENT)) }
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
        return Hex.string(hasher.finalize())
    }
}

/// Writes one answer into the part file as it streams in, refusing any byte past the range asked
/// (or past the file's signed size when the server sends the whole file instead).
private final class PartWriter: Sendable {
    struct State {
        var start: Int
        var end: Int
        var restarted = false
        var validator: String?
    }

    private struct Writing {
        var current: State
        /// The last byte an answer may reach: the range's end, or the file's signed size.
        var limit: Int
    }

    private let handle: Locked<FileHandle>
    private let path: String
    private let fileBytes: Int
    private let progress: @Sendable (Int) -> Void
    private let writing: Locked<Writing>

    init(handle: FileHandle, path: String, offset: Int, rangeEnd: Int, fileBytes: Int, progress: @escaping @Sendable (Int) -> Void) {
        self.handle = Locked(handle)
        self.path = path
        self.fileBytes = fileBytes
        self.progress = progress
        writing = Locked(Writing(current: State(start: offset, end: offset), limit: rangeEnd))
    }

    var state: State { writing.withValue { $0.current } }

    func receive(_ chunk: SourceChunk) throws {
        let written: Int = try writing.withValue { writing in
            try handle.withValue { handle in try write(chunk, &writing, handle) }
        }
        progress(written)
    }

    private func write(_ chunk: SourceChunk, _ writing: inout Writing, _ handle: FileHandle) throws -> Int {
        var current = writing.current
        defer { writing.current = current }
        switch chunk {
        case let .start(isWholeFile, validator):
            current.validator = validator
            if isWholeFile {
                // The whole file comes (it changed, or the server ignores ranges): start over with it.
                try handle.truncate(atOffset: 0)
                current = State(start: 0, end: 0, restarted: true, validator: validator)
                writing.limit = fileBytes
            } else {
                try handle.seek(toOffset: UInt64(current.start))
            }
            return current.end
        case .bytes(let data):
            guard current.end + data.count <= writing.limit else {
                throw StationClientError.sizeDiffers(path: path, actual: current.end + data.count, expected: writing.limit)
            }
            try handle.write(contentsOf: data)
            current.end += data.count
            return current.end
        }
    }
}
