import Foundation

/// Checks made before any work, so that a command fails at once with the path and a
/// fix rather than after minutes of work with a raw system error.
package enum FileChecks {
    /// A path a file may be renamed onto: nothing, or a regular file (never a device, a
    /// folder or a pipe that happens to be named, such as `--output /dev/full`).
    package static func requireReplaceable(_ path: String) throws {
        var status = stat()
        guard stat(path, &status) == 0 else { return }
        if status.st_mode & S_IFMT != S_IFREG {
            throw FileError(cannot: "replace \(path)", code: nil,
                            reason: "it is not a regular file (a device, a folder or a pipe); give the path of a file to write")
        }
    }

    /// The size of the file at `path` in bytes, nil when there is none. `stat` alone:
    /// `FileManager.attributesOfItem` also looks the owner up in /etc/passwd and /etc/group, which
    /// cost the real import a few hundred microseconds a file.
    package static func size(_ path: String) -> Int? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Int(status.st_size)
    }

    /// Creates a folder and any missing parents (`mkdir -p`), with the system's own reason when
    /// it cannot (`not a directory`, `read-only file system`), which Foundation's error hides.
    package static func makeFolder(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + component
            if mkdir(prefix, 0o755) == 0 { continue }
            let code = errno
            var status = stat()
            if code == EEXIST && stat(prefix, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR { continue }
            throw FileError(cannot: "create the folder \(prefix)", code: code == EEXIST ? ENOTDIR : code)
        }
    }

    /// Whether an error (ours or Foundation's) is the file system saying it is out of space.
    package static func isDiskFull(_ error: Error) -> Bool {
        if let error = error as? FileError { return error.isDiskFull }
        let error = error as NSError
        if error.domain == NSCocoaErrorDomain && error.code == CocoaError.fileWriteOutOfSpace.rawValue { return true }
        if error.domain == NSPOSIXErrorDomain && error.code == Int(ENOSPC) { return true }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? Error { return isDiskFull(underlying) }
        return false
    }
}
