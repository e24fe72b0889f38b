import Foundation

/// An advisory lock on a release folder (`flock` on `DIR/.lock`): one release writes a
/// folder at a time, and `verify` reads one that no release is changing.
///
/// The kernel drops the lock when its process dies, however it dies, so a killed release
/// never leaves the folder locked. The holder writes its pid into the file, for the
/// message a waiting process prints.
final class ReleaseFolderLock {
    static let fileName = ".lock"
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// Waits up to `timeout` for the lock.
    ///
    /// - Parameter onWait: called once, with the holder's pid, if the lock is taken.
    /// - Throws: `ReleaseError.folderBusy` after `timeout`.
    static func acquire(_ folder: ReleaseFolder, exclusive: Bool, timeout: TimeInterval, onWait: ((String) -> Void)? = nil) throws -> ReleaseFolderLock {
        let path = folder.url(fileName)
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw ReleaseError.cannotWrite(folder.path, reason: String(cString: strerror(errno))) }
        let deadline = Date().addingTimeInterval(timeout)
        var hasWaited = false
        while flock(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                close(descriptor)
                throw ReleaseError.cannotWrite(folder.path, reason: String(cString: strerror(errno)))
            }
            let holder = holderPID(path)
            if Date() >= deadline {
                close(descriptor)
                throw ReleaseError.folderBusy(folder.path, holder: holder)
            }
            if !hasWaited {
                onWait?("\(folder.path): waiting for another station-admin process (pid \(holder)) that is writing this release folder")
                hasWaited = true
            }
            usleep(50_000)
        }
        if exclusive {
            ftruncate(descriptor, 0)
            let pid = Array("\(getpid())\n".utf8)
            _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        }
        return ReleaseFolderLock(descriptor: descriptor)
    }

    private static func holderPID(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines).nonEmpty ?? "unknown"
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
