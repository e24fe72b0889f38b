import Foundation
import StationFiles
import StationManifest
import StationSupport

/// An advisory lock on a release folder (`flock` on `DIR/.lock`): one release writes a
/// folder at a time, and `verify` reads one that no release is changing.
///
/// The kernel drops the lock when its process dies, however it dies, so a killed release
/// never leaves the folder locked. The holder writes its pid into the file, for the
/// message a waiting process prints.
package final class ReleaseFolderLock {
    private let descriptor: Int32
    private let isExclusive: Bool

    private init(descriptor: Int32, isExclusive: Bool) {
        self.descriptor = descriptor
        self.isExclusive = isExclusive
    }

    /// Waits up to `timeout` for the lock.
    ///
    /// A shared lock (a reader) needs no write access: in a folder where the lock file cannot be
    /// created (a read-only mount, a build artifact) no release can be writing either, and the
    /// reader goes on without a lock (nil).
    ///
    /// - Parameter onWait: called once, with a message naming the holder, if the lock is taken.
    /// - Throws: `ReleaseError.folderBusy` after `timeout`; `.cannotWrite` when an exclusive lock's
    ///   file cannot be opened.
    package static func acquire(_ folder: ReleaseFolder, exclusive: Bool, timeout: TimeInterval, onWait: ((String) -> Void)? = nil) throws -> ReleaseFolderLock? {
        let path = folder.filePath(ReleaseLayout.lockFileName)
        let descriptor: Int32
        do {
            descriptor = try openLockFile(path, exclusive: exclusive)
        } catch let refusal as OwnFiles.Refusal {
            throw ReleaseError.unsafePath(refusal.path, reason: refusal.reason)
        } catch let error as OwnFiles.SystemError {
            guard exclusive || ![EROFS, EACCES, ENOENT].contains(error.code) else { return nil }
            throw ReleaseError.cannotWrite(folder.path, reason: FileError.systemWords(error.code))
        }
        let deadline = Date().addingTimeInterval(timeout)
        var hasWaited = false
        while flock(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                close(descriptor)
                throw ReleaseError.cannotWrite(folder.path, reason: FileError.systemWords(errno))
            }
            // Read after the attempt failed: the pid of whoever holds it now, if a writer.
            let holder = holderPID(descriptor)
            if Date() >= deadline {
                close(descriptor)
                throw ReleaseError.folderBusy(folder.path, holder: holder)
            }
            if !hasWaited {
                // Only a writer leaves its pid; a reader (verify) is simply "using" the folder.
                onWait?("\(folder.path): waiting for \(describe(holder)) that is \(holder == nil ? "using" : "writing") this release folder")
                hasWaited = true
            }
            usleep(50_000)
        }
        if exclusive {
            ftruncate(descriptor, 0)
            let pid = Array("\(getpid())\n".utf8)
            _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        }
        return ReleaseFolderLock(descriptor: descriptor, isExclusive: exclusive)
    }

    /// The lock file opened never through a link, and only when it is this user's and no one
    /// else's to write: the lock is truncated to hold the writer's pid, so a planted link to
    /// the master or the signing key would empty it. A reader that cannot create it (a
    /// read-only folder) opens it to read, or goes without.
    private static func openLockFile(_ path: String, exclusive: Bool) throws -> Int32 {
        do {
            return try OwnFiles.open(path, flags: O_RDWR, create: true, mode: 0o644)
        } catch is OwnFiles.SystemError where !exclusive {
            return try OwnFiles.open(path, flags: O_RDONLY)
        }
    }

    /// `another StationAdmin process (pid 4242)`, or without the pid when it is not known.
    package static func describe(_ holder: Int32?) -> String {
        "another StationAdmin process" + (holder.map { " (pid \($0))" } ?? "")
    }

    /// The pid the exclusive holder wrote, if that process is alive; nil for a shared holder
    /// (readers write none) or a pid left by a process that is gone.
    private static func holderPID(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0, let pid = Int32(String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)),
              pid > 0, kill(pid, 0) == 0 || errno == EPERM
        else { return nil }
        return pid
    }

    deinit {
        // A waiting process must not name a writer that has finished.
        if isExclusive { ftruncate(descriptor, 0) }
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

extension ReleaseFolder {
    /// Removes the folder when it holds nothing but an unheld lock file: what a refused release
    /// leaves in a folder it made. Taking the lock first keeps another release's folder.
    package func removeIfOnlyItsLock() {
        let lockPath = filePath(ReleaseLayout.lockFileName)
        guard let contents = try? FileManager.default.contentsOfDirectory(atPath: path),
              contents.allSatisfy({ $0 == ReleaseLayout.lockFileName }) else { return }
        let descriptor = (try? OwnFiles.open(lockPath, flags: O_RDWR)) ?? -1
        if descriptor >= 0 {
            defer { close(descriptor) }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return }
            unlink(lockPath)
        }
        rmdir(path)
    }
}
