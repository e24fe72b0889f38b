import Foundation

/// A file as it is on disk now: device, inode, size and change time. A rename, a rewrite, a
/// `touch` or a write in place changes one of them (the change time follows every change of the
/// data or the inode), so a file found with the same identity is the one seen before.
package struct FileIdentity: Codable, Hashable, Sendable {
    package let device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int

    /// The identity of the file at `path` (links followed); nil when it cannot be read.
    package init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(status)
    }

    package init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        seconds = status.st_ctim.tv_sec
        nanoseconds = status.st_ctim.tv_nsec
    }
}
