import Foundation

/// Checks made before any work, so that a command fails at once with the path and a
/// fix rather than after minutes of work with a raw system error.
enum FileChecks {
    /// - Throws: `MasterDatabaseError.missing` or `.isAFolder`.
    static func requireRegularFile(_ path: String) throws {
        var isDirectory: ObjCBool = false
        guard !path.isEmpty, FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw MasterDatabaseError.missing(path)
        }
        if isDirectory.boolValue { throw MasterDatabaseError.isAFolder(path) }
    }

    /// The file and its folder must be writable: SQLite writes its WAL and journal beside it.
    static func requireWritable(_ path: String) throws {
        if access(path, W_OK) != 0 { throw MasterDatabaseError.readOnly(path) }
        try requireWritableFolder(of: path, for: path)
    }

    static func requireWritableFolder(of path: String, for reported: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if access(folder.isEmpty ? "." : folder, W_OK) != 0 { throw MasterDatabaseError.readOnly(reported) }
    }

    /// Whether a Foundation error is the file system saying it is out of space.
    static func isDiskFull(_ error: Error) -> Bool {
        let error = error as NSError
        if error.domain == NSCocoaErrorDomain && error.code == CocoaError.fileWriteOutOfSpace.rawValue { return true }
        if error.domain == NSPOSIXErrorDomain && error.code == Int(ENOSPC) { return true }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? Error { return isDiskFull(underlying) }
        return false
    }
}
