import Foundation

/// Bytes kept in a temporary file until they can be written where they belong: a report whose
/// head (its counts) is known only once its million findings have gone by is spooled here,
/// then its head written and the spool copied after it, in the memory of a buffer.
///
/// The file is unlinked as soon as it is made, so nothing is left behind, not even by a killed
/// process:
///
///     let spool = try SpoolFile()
///     try spool.write("line\n")
///     try output.write("head\n")
///     try spool.copy(to: output)
public final class SpoolFile: ByteSink {
    private let descriptor: Int32
    /// `a temporary file in DIRECTORY for PURPOSE`, for errors.
    private let place: String
    private var pending: [UInt8] = []
    /// The bytes written to the file so far (all of them after `finish`).
    package private(set) var size: Int64 = 0
    /// How much is buffered before a write, and read back at a time.
    package static let bufferSize = 1 << 20
    private static let hint = "set TMPDIR to a folder with room"

    /// A new, empty spool in a temporary file under `directory`; `purpose` (`for the list of
    /// changes`) completes its errors.
    ///
    /// - Throws: `FileError` when it cannot be created.
    public init(directory: String = NSTemporaryDirectory(), purpose: String? = nil) throws {
        let directory = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        place = "a temporary file in \(directory)" + (purpose.map { " \($0)" } ?? "")
        var template = Array((directory + "/stationadmin-spool-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw FileError(cannot: "create \(place)", hint: Self.hint) }
        unlink(template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        self.descriptor = descriptor
        pending.reserveCapacity(Self.bufferSize + 4096)
    }

    deinit { close(descriptor) }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        pending.append(contentsOf: bytes)
        if pending.count >= Self.bufferSize { try flush() }
    }

    /// Writes what is still buffered to the file.
    public func finish() throws { try flush() }

    /// Writes everything spooled so far to `sink`, a buffer at a time.
    public func copy(to sink: ByteSink) throws {
        try flush()
        var buffer = [UInt8](repeating: 0, count: Self.bufferSize)
        var offset: Int64 = 0
        while offset < size {
            let read = try buffer.withUnsafeMutableBytes { try self.read(at: offset, into: $0) }
            try buffer.withUnsafeBytes { try sink.write(UnsafeRawBufferPointer(rebasing: $0[0..<read])) }
            offset += Int64(read)
        }
    }

    /// Reads what was written from `offset` (after `finish`) into `buffer`, as much as fits.
    ///
    /// - Returns: how many bytes were read, at least one.
    /// - Throws: `FileError` when nothing can be read there.
    package func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let read = pread(descriptor, buffer.baseAddress!, Int(min(Int64(buffer.count), size - offset)), off_t(offset))
        guard read > 0 else { throw FileError(cannot: "read back \(place)") }
        return read
    }

    private func flush() throws {
        var offset = 0
        while offset < pending.count {
            let written = pending.withUnsafeBytes { pwrite(descriptor, $0.baseAddress! + offset, $0.count - offset, off_t(size)) }
            guard written > 0 else { throw FileError(cannot: "write \(place)", hint: Self.hint) }
            offset += written
            size += Int64(written)
        }
        pending.removeAll(keepingCapacity: true)
    }
}
