import Foundation
import Synchronization

/// Deflates, on a thread of its own, the blocks of a file that are final while the rest of the
/// file is still being written, so that its gzip (`ParallelGzip.compress(file:to:deflatedAhead:)`)
/// has less left to do once it is finished.
///
/// A release's client database is the case: once its tables are filled, SQLite appends the
/// indexes after them and rewrites only the first page (the schema). Building the indexes is
/// one long step on one core; the gzip of the tables' pages runs on the other meanwhile.
/// Nothing here trusts that: a block is used only if the finished file still holds the bytes it
/// was made from (`DeflatedBlock`), so the gzip is the same bytes either way.
package final class DeflatingAhead: Sendable {
    private let stopped = Mutex(false)
    private let blocks = Mutex<[Int: DeflatedBlock]>([:])
    private let done = DispatchSemaphore(value: 0)
    /// Closed by `finish`, never by the thread: closing any descriptor of a file drops every
    /// POSIX lock this process holds on it, and SQLite holds them while it builds the indexes.
    private let file: FileHandle?

    /// Starts deflating the whole blocks of `path` after the first, up to its size now. Call
    /// `finish` once whatever writes the file has closed it.
    package init(file path: String, settings: GzipSettings) {
        let size = FileChecks.size(path) ?? 0
        let last = size / ParallelGzip.blockSize - 1
        let file = FileHandle(forReadingAtPath: path)
        self.file = file
        let thread = Thread { [self] in
            defer { done.signal() }
            guard last >= 1, let file else { return }
            for index in 1...last {
                if stopped.withLock({ $0 }) { return }
                // A failure here costs only the head start: the gzip deflates the block itself.
                guard let block = try? ParallelGzip.deflateAhead(file, index: index, settings: settings) else { return }
                blocks.withLock { $0[index] = block }
            }
        }
        thread.start()
    }

    /// Stops, once the block in hand is done, and hands over the blocks deflated so far; or,
    /// `waitingForEveryBlock`, once every block is.
    package func finish(waitingForEveryBlock: Bool = false) -> [Int: DeflatedBlock] {
        if !waitingForEveryBlock { stopped.withLock { $0 = true } }
        done.wait()
        done.signal()
        try? file?.close()
        return blocks.withLock { $0 }
    }
}
