import Foundation
import StationManifest
import StationSupport
import Synchronization

/// The small files of a release folder (deltas, carry-over scripts, small databases) in memory:
/// immutable, so keyed by their SHA-256, and bounded so that memory does not grow with history.
final class SmallFileCache: Sendable {
    static let largestFile = 1 << 20
    static let budget = 24 << 20
    private let files = Mutex<(entries: [String: Data], bytes: Int)>(([:], 0))

    /// The bytes of a checked file whose SHA-256 is `sha256`, read once.
    func bytes(sha256: String, _ read: () throws -> Data) throws -> Data {
        try cached(sha256, read)
    }

    /// A gzip file's content, for a client that does not accept gzip.
    func inflated(_ file: ReleasedFile, gzip: Data) throws -> Data {
        try cached("inflated-" + file.sha256) { try Gunzip.inflate(gzip, name: file.path) }
    }

    private func cached(_ key: String, _ load: () throws -> Data) throws -> Data {
        if let held = files.withLock({ $0.entries[key] }) { return held }
        let data = try load()
        files.withLock { state in
            if state.bytes + data.count > Self.budget { state = ([:], 0) }
            if data.count <= Self.budget {
                state.entries[key] = data
                state.bytes += data.count
            }
        }
        return data
    }
}
