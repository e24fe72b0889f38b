import Foundation

/// Passes bytes to `next` on a thread of its own, so that producing them (SQLite
/// rendering a delta) and consuming them (deflate) use two cores.
///
/// Bytes are copied into chunks of about 1 MiB; at most a few chunks wait in a `BlockingQueue`,
/// so memory stays small. Unchecked `Sendable`: `pending` is touched only by the producing
/// thread, and `next` only by the consuming one (the `BackgroundTask`).
public final class BackgroundSink: ByteSink, @unchecked Sendable {
    private var pending: [UInt8] = []
    private let chunks = BlockingQueue<[UInt8]>(capacity: 4)
    private let consumer: BackgroundTask<Void>
    private static let chunkSize = 1 << 20

    /// A sink that hands its bytes to `next` on its own thread.
    public init(next: ByteSink) {
        pending.reserveCapacity(Self.chunkSize)
        let chunks = self.chunks
        // `next` moves to the consumer, which alone writes to it.
        nonisolated(unsafe) let next = next
        consumer = BackgroundTask {
            do {
                while let chunk = try chunks.take() { try chunk.withUnsafeBytes { try next.write($0) } }
                try next.finish()
            } catch {
                chunks.cancel()
                throw error
            }
        }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        pending.append(contentsOf: bytes)
        if pending.count >= Self.chunkSize { try hand() }
    }

    public func finish() throws {
        if !pending.isEmpty { try hand() }
        chunks.finish()
        try consumer.wait()
    }

    /// Hands `pending` to the consumer; throws the consumer's error if it gave up.
    private func hand() throws {
        let chunk = pending
        pending.removeAll(keepingCapacity: true)
        guard chunks.put(chunk) else {
            try consumer.wait()
            return
        }
    }
}
