import Foundation

/// A file StationAdmin could not create, write, read back or rename, in words a curator can
/// act on (`cannot write /srv/out/.delta.sql.tmp-…: No space left on device`), with the
/// system's error number so that a full disk is told apart.
public struct FileError: Error, LocalizedError, Equatable {
    /// `cannot <action>: <reason> (<hint>)`.
    public let message: String
    /// `errno` at the failure, or nil when the system did not fail (a file cut short).
    public let code: Int32?

    /// `cannot <action>: <the system's reason>`, then `(<hint>)` if any.
    package init(cannot action: String, code: Int32? = errno, reason: String? = nil, hint: String? = nil) {
        let why = reason ?? code.map { Self.systemWords($0) } ?? "unknown reason"
        message = "cannot \(action): \(why)" + (hint.map { " (\($0))" } ?? "")
        self.code = code
    }

    /// A path that is not what the command reads: `is a FIFO (named pipe), not a regular file`.
    package init(notRegular what: String) {
        message = what
        code = nil
    }

    public var errorDescription: String? { message }
    /// A disk full under a file of ours; a full disk behind standard output is the reader's, and
    /// no file of the master's or the release's is to blame for it.
    package var isDiskFull: Bool { code == ENOSPC && !isStandardOutput }
    /// The failed write was to standard output.
    package var isStandardOutput = false
}

extension FileError {
    /// Words for a file-system error of any origin (ours, Foundation's, the system's), such as
    /// `permission denied` or `read-only file system`: never an error domain or a raw code,
    /// which tell a curator nothing.
    package static func words(for error: Error) -> String {
        if let error = error as? FileError { return error.message }
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain { return systemWords(Int32(error.code)) }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return systemWords(Int32(underlying.code))
        }
        if error.domain == NSCocoaErrorDomain {
            switch CocoaError.Code(rawValue: error.code) {
            case .fileNoSuchFile, .fileReadNoSuchFile: return systemWords(ENOENT)
            case .fileReadNoPermission, .fileWriteNoPermission: return systemWords(EACCES)
            case .fileWriteVolumeReadOnly: return systemWords(EROFS)
            case .fileWriteOutOfSpace: return systemWords(ENOSPC)
            case .fileWriteFileExists: return systemWords(EEXIST)
            case .fileWriteInvalidFileName, .fileReadInvalidFileName: return "an invalid file name"
            case .fileReadTooLarge: return "the file is too large"
            case .fileReadCorruptFile: return "the file is unreadable"
            default: return "the file system refused the operation"
            }
        }
        return error.localizedDescription
    }

    /// `strerror`'s words, lower-cased as they read inside a sentence: `permission denied`.
    package static func systemWords(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }

    /// What a path is when it is not a regular file, in words (`is a directory`, `is a FIFO
    /// (named pipe)`, `is a device`); nil for a regular file or a path that does not exist.
    package static func notRegularFile(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "is a directory, not a regular file"
        case S_IFIFO: return "is a FIFO (named pipe), not a regular file"
        case S_IFCHR, S_IFBLK: return "is a device, not a regular file"
        case S_IFSOCK: return "is a socket, not a regular file"
        default: return "is not a regular file"
        }
    }
}

/// The one line a command prints for an error that reached it.
public enum ErrorText {
    /// Our errors say what is wrong and how to fix it; a file-system error of Foundation's that
    /// got this far is put in words with its path, never as an error domain and a number.
    public static func describe(_ error: Error) -> String {
        let bridged = error as NSError
        if error is CocoaError || bridged.domain == NSCocoaErrorDomain || bridged.domain == NSPOSIXErrorDomain {
            let path = (bridged.userInfo[NSFilePathErrorKey] as? String) ?? (bridged.userInfo[NSURLErrorKey] as? URL)?.path
            return (path.map { "\($0): " } ?? "") + FileError.words(for: error)
        }
        return (error as? LocalizedError)?.errorDescription ?? String(describing: error)
    }
}
