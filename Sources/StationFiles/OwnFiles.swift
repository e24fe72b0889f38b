#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files and folders that only this user can have made: what the tools lock, write and build in
/// (a release folder's `.lock`, a phone's `<db>.lock` and `<db>.update/`, a download's part).
///
/// A path in a folder others can reach may be a link planted to make a tool write somewhere else
/// (`release/.lock` → the master, and the lock's truncation empties it), or a file or folder
/// another local user made to hand a tool their bytes. So a file is opened without following a
/// final link (`O_NOFOLLOW`), and what was opened is checked on its descriptor (`fstat`, not
/// `stat` on the path, which a racer can swap): a regular file, owned by this process's user,
/// that no one else can write. A folder is checked with `lstat` the same way; one this code makes
/// is private (mode 0700).
public enum OwnFiles {
    /// Why a path is not this user's own.
    public struct Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        /// The path refused.
        public let path: String
        /// What it is instead: "is a link", "belongs to another user (uid 65534)", …
        public let reason: String

        public var description: String { "\(path) \(reason)" }
    }

    /// Opens `path` with `flags` (`O_RDWR`, `O_RDONLY`, …), creating it with `mode` when `create`
    /// and it is missing, never through a final link; returns its descriptor.
    ///
    /// - Throws: `Refusal` for a link, a file of another user's or one others can write, or
    ///   something other than a regular file; `SystemError` for any other failure (its `errno`).
    public static func open(_ path: String, flags: Int32, create: Bool = false, mode: mode_t = 0o600) throws -> Int32 {
        let descriptor = create ? systemOpen(path, flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode) : systemOpen(path, flags | O_NOFOLLOW | O_CLOEXEC, 0)
        guard descriptor >= 0 else {
            let code = errno
            if code == ELOOP { throw Refusal(path: path, reason: "is a link (a file this tool writes is never opened through one)") }
            throw SystemError(path: path, code: code)
        }
        do {
            try requireOwn(descriptor: descriptor, path: path, kind: S_IFREG)
        } catch {
            close(descriptor)
            throw error
        }
        return descriptor
    }

    /// Makes `path` a private folder (mode 0700) when missing, else checks that it is a folder of
    /// this user's that no one else can write, not a link.
    ///
    /// - Throws: `Refusal`, or `SystemError` when it cannot be made.
    public static func folder(_ path: String, create: Bool = true) throws {
        if create && mkdir(path, 0o700) != 0 && errno != EEXIST { throw SystemError(path: path, code: errno) }
        try requireOwnFolder(path)
    }

    /// Checks an existing folder: not a link, this user's, written by no one else.
    public static func requireOwnFolder(_ path: String) throws {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw SystemError(path: path, code: errno) }
        try requireOwn(status, path: path, kind: S_IFDIR)
    }

    /// Checks what `descriptor` is open on: of `kind` (`S_IFREG`, `S_IFDIR`), this user's, written by no one else.
    public static func requireOwn(descriptor: Int32, path: String, kind: mode_t = S_IFREG) throws {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw SystemError(path: path, code: errno) }
        try requireOwn(status, path: path, kind: kind)
    }

    private static func requireOwn(_ status: stat, path: String, kind: mode_t) throws {
        let type = status.st_mode & S_IFMT
        if type == S_IFLNK { throw Refusal(path: path, reason: "is a link (a file this tool writes is never opened through one)") }
        guard type == kind else {
            throw Refusal(path: path, reason: kind == S_IFDIR ? "is not a folder" : "is not a regular file")
        }
        guard status.st_uid == geteuid() else {
            throw Refusal(path: path, reason: "belongs to another user (uid \(status.st_uid); this process runs as uid \(geteuid()))")
        }
        guard status.st_mode & 0o022 == 0 else {
            throw Refusal(path: path, reason: "can be written by others (mode \(String(status.st_mode & 0o777, radix: 8)); expected no group or other write, e.g. chmod go-w)")
        }
    }

    /// A system call's failure on a path, with its `errno`.
    public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
        public let path: String
        public let code: Int32

        public var description: String { "\(path): \(String(cString: strerror(code)))" }
    }
}

/// The C library's `open`, which `OwnFiles.open` shadows by name.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    open(path, flags, mode)
}
