import Foundation

/// Where an app reads a release folder from: an HTTP server (`station-admin serve`, nginx, a
/// CDN) with ``HTTPReleaseSource``, or a folder on disk with ``FolderReleaseSource``.
///
/// A source streams what it reads to `receive`, chunk by chunk: nothing is held whole, and the
/// receiver stops a transfer the moment it has what it asked for (it throws, and the source
/// passes that error on).
public protocol ReleaseSource: Sendable {
    /// Reads `request`'s bytes into `receive`: first `.start`, then the bytes, in order.
    ///
    /// - Throws: `StationClientError.http` with status 404 for a missing file; what `receive`
    ///   throws; `CancellationError` when the task is cancelled.
    func read(_ request: SourceRequest, into receive: @escaping @Sendable (SourceChunk) throws -> Void) async throws
}

/// One read of a file of the release folder.
public struct SourceRequest: Sendable {
    /// Relative to the release folder (`5/stations.sqlite.gz`).
    public var path: String
    /// The first byte wanted.
    public var offset: Int
    /// How many bytes from `offset`; nil: to the end.
    public var length: Int?
    /// The validator the file's first part came with: a server whose file changed since answers
    /// the whole file instead of the range.
    public var ifRange: String?
    /// The most bytes an answer may bring (the file's signed size, or a cap): a server that
    /// announces more, or does not say how many it sends, is refused before its body is read.
    public var maximumBytes: Int?
    /// How long and how slowly the transfer may go.
    public var limits: TransferLimits

    /// A read of `path` from `offset`.
    public init(path: String, offset: Int = 0, length: Int? = nil, ifRange: String? = nil, maximumBytes: Int? = nil,
                limits: TransferLimits = TransferLimits()) {
        self.path = path
        self.offset = offset
        self.length = length
        self.ifRange = ifRange
        self.maximumBytes = maximumBytes
        self.limits = limits
    }
}

/// What a source hands its receiver.
public enum SourceChunk: Sendable {
    /// The answer begins. `isWholeFile`: the whole file from byte 0 comes, though a later offset
    /// or a range was asked (the file changed, or the server ignores ranges). `validator`: the
    /// file's strong ETag, for the next part's `ifRange`.
    case start(isWholeFile: Bool, validator: String?)
    /// The next bytes.
    case bytes(Data)
}

/// How slowly a transfer may go before it is abandoned (TUF's slow-retrieval attack): a request
/// that has run longer than `graceSeconds` and averaged fewer than `minimumBytesPerSecond` is
/// cut. What arrived is kept; the next update resumes it. The idle timeout (no byte at all) is
/// the session configuration's `timeoutIntervalForRequest`.
public struct TransferLimits: Sendable, Equatable {
    /// The lowest average rate a transfer may keep after its grace period.
    public var minimumBytesPerSecond: Double
    /// How long a transfer may run before its rate is judged.
    public var graceSeconds: Double

    /// By default, slower than 1 KiB/s on average after 30 s is abandoned.
    public init(minimumBytesPerSecond: Double = 1024, graceSeconds: Double = 30) {
        self.minimumBytesPerSecond = minimumBytesPerSecond
        self.graceSeconds = graceSeconds
    }
}

extension ReleaseSource {
    /// The whole of a small file (the manifest, its signatures), refused past `limit` bytes as
    /// soon as they arrive; nil when the source has no such file.
    func whole(_ path: String, limit: Int, limits: TransferLimits) async throws -> Data? {
        let collected = Collected()
        do {
            try await read(SourceRequest(path: path, maximumBytes: limit, limits: limits)) { chunk in
                guard case .bytes(let data) = chunk else { return }
                try collected.append(data, limit: limit, path: path)
            }
        } catch StationClientError.http(_, 404) {
            return nil
        }
        return collected.data
    }
}

/// The bytes of a small file as they arrive, from the source's thread.
private final class Collected: Sendable {
    private let bytes = Locked(Data())

    func append(_ data: Data, limit: Int, path: String) throws {
        try bytes.withValue { bytes in
            guard bytes.count + data.count <= limit else { throw StationClientError.tooLarge(path: path, bytes: bytes.count + data.count, limit: limit) }
            bytes.append(data)
        }
    }

    var data: Data { bytes.withValue { $0 } }
}

/// A release folder on disk.
public struct FolderReleaseSource: ReleaseSource {
    /// The folder's URL.
    public let folder: URL

    /// The release folder at `folder`.
    public init(folder: URL) { self.folder = folder }

    public func read(_ request: SourceRequest, into receive: @escaping @Sendable (SourceChunk) throws -> Void) async throws {
        guard let handle = FileHandle(forReadingAtPath: folder.appendingPathComponent(request.path).path) else {
            throw StationClientError.http(path: request.path, status: 404)
        }
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(request.offset))
        try receive(.start(isWholeFile: false, validator: nil))
        var remaining = request.length ?? Int.max
        while remaining > 0 {
            try Task.checkCancellation()
            guard let chunk = try handle.read(upToCount: min(remaining, 1 << 16)), !chunk.isEmpty else { return }
            try receive(.bytes(chunk))
            remaining -= chunk.count
        }
    }
}
