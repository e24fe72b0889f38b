import Foundation
import StationSignatures

/// Why an update did not happen; the phone's database is as it was, and the app retries later.
public enum StationClientError: Error, LocalizedError, Equatable {
    /// The manifest's signatures (or its absence) refused: see `SignatureError`.
    case refused(SignatureError)
    case badManifest(String)
    case http(path: String, status: Int)
    case network(path: String, reason: String)
    case tooLarge(path: String, bytes: Int, limit: Int)
    case sizeDiffers(path: String, actual: Int, expected: Int)
    case hashDiffers(path: String)
    case corruptGzip(String)
    case newerThanRelease(phone: Int, newest: Int)
    case database(String)
    case noCarryOver(version: Int)

    public var errorDescription: String? {
        switch self {
        case .refused(let reason): return "refused: \(reason.localizedDescription)"
        case .badManifest(let reason): return "the manifest cannot be read: \(reason)"
        case let .http(path, status): return "\(path): HTTP \(status)"
        case let .network(path, reason): return "\(path): \(reason)"
        case let .tooLarge(path, bytes, limit): return "\(path): \(bytes) bytes, more than the \(limit) this phone downloads"
        case let .sizeDiffers(path, actual, expected): return "\(path): \(actual) bytes, the manifest says \(expected)"
        case .hashDiffers(let path): return "\(path): its SHA-256 is not the manifest's"
        case .corruptGzip(let path): return "\(path): not a whole gzip file"
        case let .newerThanRelease(phone, newest): return "the phone's database is at version \(phone), newer than the release's \(newest)"
        case .database(let reason): return "the phone's database: \(reason)"
        case .noCarryOver(let version): return "release \(version) has no carry-over script (a folder of format 2 or older)"
        }
    }
}
