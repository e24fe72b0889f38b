import Foundation

/// Reads a pipe to its end with `read(2)`, retrying when a signal interrupts it.
///
/// Foundation's `readDataToEndOfFile()` traps on EINTR, and a process that runs children
/// receives SIGCHLD whenever one ends.
public enum PipeReader {
    /// Every byte until the writer closes the pipe.
    public static func readAll(_ handle: FileHandle) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: buffer[0..<count])
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return data
            }
        }
    }

    /// Reads two pipes at once (one on another thread), so that a child filling one while
    /// we wait on the other never blocks.
    public static func readBoth(_ first: FileHandle, _ second: FileHandle) -> (Data, Data) {
        let other = BackgroundTask { readAll(second) }
        let data = readAll(first)
        // `readAll` throws nothing: the work's outcome is its bytes.
        return (data, (try? other.wait()) ?? Data())
    }
}
