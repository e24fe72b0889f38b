import Foundation
import NIOCore
import StationManifest
import StationSupport
import Synchronization

/// The small files of a release folder (deltas, carry-over scripts, small databases) in memory:
/// immutable, so keyed by their SHA-256, and bounded so that memory does not grow with history.
///
/// Held as NIO buffers, which every response of the file shares (a slice of one is a view, not a
/// copy): a thousand stalled downloads of the newest database hold it once, not a thousand times.
final class SmallFileCache: Sendable {
    static let largestFile = 1 << 20
    static let budget = 24 << 20
    private let files = Mutex<(entries: [String: ByteBuffer], bytes: Int)>(([:], 0))

    /// The bytes of a checked file whose SHA-256 is `sha256`, read once.
    func bytes(sha256: String, _ read: () throws -> ByteBuffer) throws -> ByteBuffer {
        try cached(sha256, read)
    }

    /// A gzip file's content, for a client that does not accept gzip.
    func inflated(_ file: ReleasedFile, gzip: ByteBuffer) throws -> ByteBuffer {
        try cached("inflated-" + file.sha256) { ByteBuffer(bytes: try Gunzip.inflate(Data(gzip.readableBytesView), name: file.path)) }
    }

    private func cached(_ key: String, _ load: () throws -> ByteBuffer) throws -> ByteBuffer {
        if let held = files.withLock({ $0.entries[key] }) { return held }
        let buffer = try load()
        files.withLock { state in
            if state.bytes + buffer.readableBytes > Self.budget { state = ([:], 0) }
            if buffer.readableBytes <= Self.budget {
                state.entries[key] = buffer
                state.bytes += buffer.readableBytes
            }
        }
        return buffer
    }
}
