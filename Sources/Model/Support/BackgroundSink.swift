import Foundation

/// Passes bytes to `next` on a thread of its own, so that producing them (SQLite
/// rendering a delta) and consuming them (deflate) use two cores.
///
/// Bytes are copied into chunks of about 1 MiB; at most a few chunks wait, so memory stays small.
/// Unchecked `Sendable`: its state is guarded by an `NSCondition` (a condition variable, which
/// `Mutex` has not), and `next` is touched only by the consuming thread.
public final class BackgroundSink: ByteSink, @unchecked Sendable {
    private let next: ByteSink
    private var pending: [UInt8] = []
    private var queue: [[UInt8]] = []
    private var failure: Error?
    private var finished = false
    private let condition = NSCondition()
    private var worker: Thread?
    private static let chunkSize = 1 << 20
    private static let maximumWaiting = 4

    /// A sink that hands its bytes to `next` on its own thread.
    public init(next: ByteSink) {
        self.next = next
        pending.reserveCapacity(Self.chunkSize)
        let worker = Thread { [self] in self.drain() }
        worker.stackSize = 1 << 20
        self.worker = worker
        worker.start()
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        pending.append(contentsOf: bytes)
        if pending.count >= Self.chunkSize { try hand(pending); pending.removeAll(keepingCapacity: true) }
    }

    public func finish() throws {
        if !pending.isEmpty { try hand(pending); pending = [] }
        condition.lock()
        finished = true
        condition.broadcast()
        while finished && worker != nil { condition.wait() }
        let failure = self.failure
        condition.unlock()
        if let failure { throw failure }
    }

    private func hand(_ chunk: [UInt8]) throws {
        condition.lock()
        defer { condition.unlock() }
        while queue.count >= Self.maximumWaiting && failure == nil { condition.wait() }
        if let failure { throw failure }
        queue.append(chunk)
        condition.broadcast()
    }

    private func drain() {
        while true {
            condition.lock()
            while queue.isEmpty && !finished { condition.wait() }
            if queue.isEmpty && finished {
                do { try next.finish() } catch { failure = failure ?? error }
                worker = nil
                condition.broadcast()
                condition.unlock()
                return
            }
            let chunk = queue.removeFirst()
            condition.broadcast()
            condition.unlock()
            do {
                try chunk.withUnsafeBytes { try next.write($0) }
            } catch {
                condition.lock()
                failure = failure ?? error
                queue.removeAll()
                condition.broadcast()
                condition.unlock()
            }
        }
    }
}
