import Foundation
import StationFiles

/// One update of a database at a time, across processes: an advisory lock (`flock`) on
/// `<database>.lock`, beside the database. An app and its background task or extension each
/// make their own updater; the second waits for the first, or gives up with `busy`.
///
/// The lock file is never removed: removing it would let a third process lock a new file while
/// a second still holds the old one. The kernel drops the lock when its holder dies, so a killed
/// update never blocks the next launch.
final class UpdateLock: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// Takes the lock of `database`, waiting up to `timeout` for another holder to finish.
    ///
    /// - Throws: `StationClientError.busy` when the wait ends, `readOnly` when the lock file
    ///   cannot be created, `unsafeFile` when it is a link or another user's, `CancellationError` when the task is cancelled while waiting.
    static func acquire(for database: String, timeout: TimeInterval) async throws -> UpdateLock {
        let path = database + ".lock"
        let descriptor: Int32
        do {
            // Never through a link, never another user's file: a lock planted as a link to
            // another file would be locked (and kept open) in its place.
            descriptor = try OwnFiles.open(path, flags: O_RDWR, create: true, mode: 0o644)
        } catch let refusal as OwnFiles.Refusal {
            throw StationClientError.unsafeFile(path: refusal.path, reason: refusal.reason)
        } catch let error as OwnFiles.SystemError {
            if error.code == ENOSPC { throw StationClientError.storageFull(path: path, cause: POSIXError(.ENOSPC)) }
            throw StationClientError.readOnly(database: database)
        }
        let waiting = Stopwatch()
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, waiting.seconds < timeout else {
                close(descriptor)
                throw StationClientError.busy(database: database)
            }
            do {
                try await Task.sleep(nanoseconds: 20_000_000)
            } catch {
                close(descriptor)
                throw error
            }
        }
        return UpdateLock(descriptor: descriptor)
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
