import Crypto
import Foundation
import NIOCore
import StationManifest
import StationSupport
import Synchronization

/// A file the manifest lists, opened the only way `serve` sends one: reached from the release
/// folder without a symbolic link at any step, a regular file, and of the manifest's size.
///
/// Each request opens the file again, so a file replaced after start (by a link, a FIFO, other
/// bytes) is judged as it is now. The open never blocks (`O_NONBLOCK`: a FIFO would wait for a
/// writer for ever and hold a worker), and reads are `pread`s of a regular file, which end.
final class ServedFile: Sendable {
    let path: String
    let descriptor: Int32
    let identity: FileIdentity

    /// Opens `listed` inside `folder`, refusing what a manifest cannot mean.
    convenience init(_ listed: ReleasedFile, in folder: String) throws(ServedFileError) {
        try self.init(listed.path, bytes: listed.bytes, in: folder)
    }

    /// Opens `relative` inside `folder`: `bytes` long, unless nil (a file the manifest cannot list,
    /// such as its signatures).
    init(_ relative: String, bytes: Int?, in folder: String) throws(ServedFileError) {
        path = relative
        var directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { throw .unreadable(relative, String(cString: strerror(errno))) }
        let components = relative.split(separator: "/").map(String.init)
        for component in components.dropLast() {
            let next = openat(directory, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let failure = next < 0 ? Self.openError(relative, errno, at: directory, component) : nil
            close(directory)
            if let failure { throw failure }
            directory = next
        }
        let name = components.last ?? ""
        let opened = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        let failure = opened < 0 ? Self.openError(relative, errno, at: directory, name) : nil
        close(directory)
        if let failure { throw failure }
        var status = stat()
        guard fstat(opened, &status) == 0 else {
            close(opened)
            throw .unreadable(relative, String(cString: strerror(errno)))
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            close(opened)
            throw .notRegular(relative)
        }
        if let bytes, Int(status.st_size) != bytes {
            close(opened)
            throw .sizeDiffers(relative, actual: Int(status.st_size), listed: bytes)
        }
        descriptor = opened
        identity = FileIdentity(status)
    }

    deinit { close(descriptor) }

    /// `count` bytes from `offset`, read straight into the buffer a response sends; fewer than
    /// asked means the file shrank while served.
    func read(offset: Int, count: Int) throws(ServedFileError) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: count)
        var done = 0
        while done < count {
            var read = 0
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count - done) { bytes in
                read = pread(descriptor, bytes.baseAddress!, count - done, off_t(offset + done))
                return max(read, 0)
            }
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else {
                throw read < 0 ? .unreadable(path, String(cString: strerror(errno))) : .changedWhileServed(path)
            }
            done += read
        }
        return buffer
    }

    /// The SHA-256 of the whole file (hex), read in 1 MiB steps.
    func sha256() throws(ServedFileError) -> String {
        var hasher = SHA256()
        let size = Int(identity.size)
        var offset = 0
        while offset < size {
            let count = min(1 << 20, size - offset)
            hasher.update(data: try read(offset: offset, count: count).readableBytesView)
            offset += count
        }
        return FileDigest.hex(hasher.finalize())
    }

    /// Why `name` in `directory` did not open: `O_NOFOLLOW` on a link and `O_DIRECTORY` on a
    /// file give the same errors, so the entry itself says which it is.
    private static func openError(_ path: String, _ code: Int32, at directory: Int32, _ name: String) -> ServedFileError {
        switch code {
        case ELOOP, ENOTDIR:
            var status = stat()
            let isLink = fstatat(directory, name, &status, AT_SYMLINK_NOFOLLOW) == 0 && status.st_mode & S_IFMT == S_IFLNK
            return isLink ? .throughLink(path) : .notRegular(path)
        case ENOENT: return .missing(path)
        default: return .unreadable(path, String(cString: strerror(code)))
        }
    }
}

/// The files whose content was hashed and found to be the manifest's, by what identifies them
/// on disk (device, inode, size, change time): a large file is hashed once per change, not per
/// request, and a file rewritten in place gets a new change time and is hashed again.
final class VerifiedFiles: Sendable {
    /// Far more than a release folder's files; past it the record starts again.
    static let capacity = 4096
    private let hashes = Mutex<[FileIdentity: String]>([:])

    /// Throws unless `file`'s bytes hash to `listed.sha256` (hashing only when not known).
    func check(_ file: ServedFile, against listed: ReleasedFile) throws(ServedFileError) {
        if hashes.withLock({ $0[file.identity] }) == listed.sha256 { return }
        let hash = try file.sha256()
        guard hash == listed.sha256 else { throw .contentDiffers(listed.path) }
        hashes.withLock { known in
            if known.count >= Self.capacity { known.removeAll() }
            known[file.identity] = hash
        }
    }
}

/// Why a file the manifest lists is not sent: the server's log names the file and the reason,
/// the phone gets a 500 and tries again later.
enum ServedFileError: Error, LocalizedError, Equatable {
    case missing(String)
    case throughLink(String)
    case notRegular(String)
    case sizeDiffers(String, actual: Int, listed: Int)
    case contentDiffers(String)
    case changedWhileServed(String)
    case unreadable(String, String)

    var errorDescription: String? {
        switch self {
        case .missing(let path):
            return "\(path): listed in the manifest but missing from the folder (`station-admin verify --out` names every such file)"
        case .throughLink(let path):
            return "\(path): reached through a symbolic link, which serve never follows (copy the file into the folder)"
        case .notRegular(let path):
            return "\(path): not a regular file (a FIFO, device or folder), so not served"
        case let .sizeDiffers(path, actual, listed):
            return "\(path): \(actual) bytes on disk, the manifest says \(listed); the file is damaged or replaced (`station-admin verify --out` names every such file)"
        case .contentDiffers(let path):
            return "\(path): its SHA-256 is not the manifest's; the file is damaged or replaced (`station-admin verify --out` names every such file)"
        case .changedWhileServed(let path):
            return "\(path): changed while it was being sent; the response was cut short"
        case let .unreadable(path, reason):
            return "\(path): cannot be read: \(reason)"
        }
    }
}
