import Foundation
import GRDB
import StationFiles
import StationSignatures

/// Why an update did not happen. Whatever the case, the app's database is as it was: every
/// table, every record, the version it had.
///
/// An app decides what to do from ``category`` (retry later, wait for a connection, tell the user
/// that storage is full, …) and logs the rest; ``underlyingError`` keeps the cause as it came
/// (a `URLError`, GRDB's `DatabaseError` with SQLite's code, the app's own error from its hook).
/// Task cancellation is not an error of this type: `CancellationError` passes through.
public enum StationClientError: Error, LocalizedError, CustomStringConvertible {
    /// The manifest's signatures (or their absence) were refused: see `SignatureError`.
    case refused(SignatureError)
    /// The manifest, signed or not, is not one this library reads.
    case badManifest(path: String, reason: String)
    /// A file is larger than the app allows (`Configuration.maximumDownloadBytes` or
    /// `maximumManifestBytes`), or larger than the manifest says.
    case tooLarge(path: String, bytes: Int, limit: Int)
    /// A download ended early (`actual` below `expected`: retry) or came out larger than signed.
    case sizeDiffers(path: String, actual: Int, expected: Int)
    /// A file's SHA-256 is not the one the signed manifest gives.
    case hashDiffers(path: String)
    /// A gzip file that does not inflate, or inflates past the size the manifest signed.
    case corruptGzip(path: String)
    /// No network: the device is offline, or the host cannot be reached.
    case offline(path: String, cause: URLError)
    /// The transfer failed on the way (a reset, a timeout, a TLS error).
    case network(path: String, cause: any Error)
    /// The server answered an HTTP status other than 200 or 206.
    case http(path: String, status: Int)
    /// The server did not say how many bytes it would send (no `Content-Length`): refused before
    /// its body is read, since an endless one could not be told from a whole one in time.
    case noContentLength(path: String)
    /// The file arrived more slowly than `TransferLimits.minimumBytesPerSecond`; what arrived is kept
    /// and the next update resumes it.
    case tooSlow(path: String, bytes: Int, seconds: Double)
    /// Another process (or another updater) is updating this database, and kept it longer than
    /// `Configuration.lockTimeout`.
    case busy(database: String)
    /// The device's storage is full (`ENOSPC`, `SQLITE_FULL`).
    case storageFull(path: String, cause: any Error)
    /// The database (or its folder) cannot be written: an update is refused on every path.
    case readOnly(database: String)
    /// SQLite refused (its code is in `cause`, a `DatabaseError`).
    case database(path: String, cause: any Error)
    /// What the database remembers of the manifests it accepted cannot be read: refused, never reset.
    case damagedTrustState(database: String, reason: String)
    /// The database is newer than the newest release the source offers (a mirror behind, or
    /// another dataset).
    case newerThanRelease(database: Int, newest: Int)
    /// The plan passed to `update(_:)` was made from another manifest or another version of the
    /// database: check again.
    case planOutdated(reason: String)
    /// A table of the release cannot replace the database's table of that name (another key, or
    /// an app's object of a release index's name): nothing was changed.
    case incompatibleTable(name: String, reason: String)
    /// A delta ran and left the database at another version than the manifest's (rolled back).
    case wrongVersionAfterDelta(expected: Int, actual: Int)
    /// The app's own hook threw (rolled back with the rest).
    case appData(cause: any Error)
    /// A file or folder the update would lock or write (`<database>.lock`, `<database>.update/`
    /// and its files) is a link, another user's, or writable by others: nothing was written through it.
    case unsafeFile(path: String, reason: String)
    /// After an install (a delta, a full or a bundled database), the release tables' content
    /// hash is not the signed manifest's (rolled back): a delta whose rows are not the release's,
    /// or a file installed that is not the file that was checked.
    case contentDiffers(version: Int, expected: String, actual: String)

    /// What an app does about an error.
    public enum Category: String, Sendable, Equatable, CaseIterable {
        /// No connection: try again when the device is online.
        case offline
        /// A passing failure (network, server, a cut download that resumes): try again later.
        case retryLater
        /// The release is not trustworthy (signatures, hashes, sizes): do not retry soon; report it.
        case untrusted
        /// Free some space, then try again.
        case storageFull
        /// Another update of this database is under way: try again when it ends.
        case busy
        /// The database cannot take an update (read-only, damaged): the app must look at it.
        case unusableDatabase
        /// The app's own hook failed.
        case appData
        /// Check again (`check()`), then update.
        case checkAgain
    }

    /// What an app does about it.
    public var category: Category {
        switch self {
        case .refused, .badManifest, .tooLarge, .hashDiffers, .corruptGzip, .wrongVersionAfterDelta, .contentDiffers: return .untrusted
        case let .sizeDiffers(_, actual, expected): return actual < expected ? .retryLater : .untrusted
        case .offline: return .offline
        case .network, .http, .noContentLength, .tooSlow, .newerThanRelease: return .retryLater
        case .busy: return .busy
        case .storageFull: return .storageFull
        case .readOnly, .database, .damagedTrustState, .incompatibleTable, .unsafeFile: return .unusableDatabase
        case .planOutdated: return .checkAgain
        case .appData: return .appData
        }
    }

    /// The error this one wraps, as it came: a `URLError`, a `DatabaseError`, the app's own.
    public var underlyingError: (any Error)? {
        switch self {
        case .refused(let error): return error
        case .offline(_, let cause): return cause
        case .network(_, let cause), .storageFull(_, let cause), .database(_, let cause), .appData(let cause): return cause
        default: return nil
        }
    }

    public var errorDescription: String? {
        switch self {
        case .refused(let reason): return "the release was refused: \(reason.phoneDescription)"
        case let .badManifest(path, reason): return "\(path) cannot be read: \(reason)"
        case let .tooLarge(path, bytes, limit): return "\(path): \(bytes) bytes or more, over the \(limit) allowed"
        case let .sizeDiffers(path, actual, expected):
            return actual < expected ? "\(path): the download stopped at \(actual) of \(expected) bytes; the next attempt resumes it"
                : "\(path): \(actual) bytes or more, where the signed manifest says \(expected)"
        case .hashDiffers(let path): return "\(path): its SHA-256 is not the signed manifest's"
        case .corruptGzip(let path): return "\(path): not a whole gzip file of the signed size"
        case let .offline(path, cause): return "\(path): offline (\(cause.localizedDescription))"
        case let .network(path, cause): return "\(path): \(cause.localizedDescription)"
        case let .http(path, status): return "\(path): HTTP \(status)"
        case .noContentLength(let path): return "\(path): the server did not say how many bytes it sends (no Content-Length); refused unread"
        case let .tooSlow(path, bytes, seconds):
            return "\(path): \(bytes) bytes in \(Int(seconds)) s, slower than allowed; the next attempt resumes it"
        case .busy(let database): return "\(database): another update of this database is under way"
        case let .storageFull(path, cause): return "\(path): the device's storage is full (\(cause.localizedDescription))"
        case .readOnly(let database): return "\(database): the database or its folder is read-only"
        case let .database(path, cause): return "\(path): \(cause)"
        case let .damagedTrustState(database, reason): return "\(database): the record of accepted releases is damaged (\(reason))"
        case let .newerThanRelease(database, newest): return "the database is at version \(database), newer than the release's \(newest)"
        case .planOutdated(let reason): return "the plan is outdated: \(reason); check again"
        case let .incompatibleTable(name, reason): return "the release's table \(name) cannot replace the database's: \(reason)"
        case let .wrongVersionAfterDelta(expected, actual): return "the delta left version \(actual), not \(expected) (rolled back)"
        case .appData(let cause): return "the app's own update of its data failed: \(cause)"
        case let .unsafeFile(path, reason): return "\(path) \(reason); the update wrote nothing through it (remove it if the app did not make it)"
        case let .contentDiffers(version, expected, actual):
            return "the release tables of version \(version) hash to \(actual), not the signed \(expected) (rolled back)"
        }
    }

    public var description: String { errorDescription ?? "StationClientError" }

    /// `error` as this library reports it: SQLite's full disk and Foundation's `ENOSPC` become
    /// `storageFull`, a read-only file `readOnly`; cancellation passes through as it is.
    static func wrapping(_ error: any Error, path: String) -> any Error {
        if error is CancellationError { return error }
        return converted(error, path: path)
    }

    /// `error` as this library reports it, where no cancellation can come (synchronous calls).
    static func converted(_ error: any Error, path: String) -> StationClientError {
        if let error = error as? StationClientError { return error }
        if let refusal = error as? OwnFiles.Refusal { return StationClientError.unsafeFile(path: refusal.path, reason: refusal.reason) }
        if let database = error as? DatabaseError {
            switch database.resultCode {
            case .SQLITE_FULL: return StationClientError.storageFull(path: path, cause: database)
            case .SQLITE_READONLY: return StationClientError.readOnly(database: path)
            case .SQLITE_BUSY, .SQLITE_LOCKED: return StationClientError.busy(database: path)
            default: return StationClientError.database(path: path, cause: database)
            }
        }
        let nsError = error as NSError
        if nsError.domain == NSPOSIXErrorDomain && nsError.code == Int(ENOSPC)
            || (nsError.userInfo[NSUnderlyingErrorKey] as? NSError).map({ $0.domain == NSPOSIXErrorDomain && $0.code == Int(ENOSPC) }) == true
            || nsError.domain == NSCocoaErrorDomain && nsError.code == NSFileWriteOutOfSpaceError {
            return StationClientError.storageFull(path: path, cause: error)
        }
        return StationClientError.database(path: path, cause: error)
    }
}

extension SignatureError {
    /// The reason in a phone's words: no command of the curators' tool.
    var phoneDescription: String {
        switch self {
        case .unsigned: return "the release folder is not signed"
        case let .expired(expires, now): return "the release expired at \(expires) (now \(now)); the publisher has not renewed it"
        default: return localizedDescription
        }
    }
}
