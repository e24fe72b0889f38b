import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A file's bytes mapped read-only into memory: the kernel hands out pages of its cache as
/// they are read, with no copy and no buffer of the file's size.
///
/// `Data(contentsOf:options: .mappedIfSafe)` reads the whole file into memory on Linux: the
/// stations file of a 1M snapshot would cost its size in memory and the zeroing and copying of
/// every page, and reading just its header would read all of it.
package enum MappedFile {
    /// Calls `body` with the file's bytes (none for an empty file).
    ///
    /// - Throws: `FileError` when the path is not a regular file (a folder, a FIFO, a device:
    ///   never opened for reading, so a FIFO cannot hang the command) or cannot be read. Its
    ///   message does not name the file: the caller does, as `FILE: cannot read it: <reason>`.
    package static func withBytes<Result>(ofFile path: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) throws -> Result {
        // Without O_NONBLOCK, opening a FIFO waits for a writer: a stuck terminal, not an error.
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileError(cannot: "read the file") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw FileError(cannot: "read the file") }
        if let what = FileError.notRegularFile(status.st_mode) { throw FileError(notRegular: what) }
        let size = Int(status.st_size)
        if size == 0 {
            // An empty buffer with an address: readers may take `baseAddress` as given.
            return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1) { try body(UnsafeBufferPointer(start: $0.baseAddress, count: 0)) }
        }
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), address != MAP_FAILED else {
            throw FileError(cannot: "read the file")
        }
        defer { munmap(address, size) }
        // Read front to back: the kernel reads ahead further and drops pages behind.
        _ = madvise(address, size, MADV_SEQUENTIAL)
        return try body(UnsafeBufferPointer(start: address.assumingMemoryBound(to: UInt8.self), count: size))
    }
}
