import Foundation

/// Rows of a CSV file, parsed and checked, in batches: the hand-over between the thread
/// that reads a file and the one that inserts into SQLite.
///
/// A struct, not a class: every field appended to a class's array paid Swift's dynamic
/// exclusivity check (about 2 of the 7.6 CPU-seconds that reading a 1M snapshot took).
package struct ParsedBatch {
    package enum Field {
        case null
        case integer(Int64)
        case real(Double)
        /// Bytes in `text`.
        case text(start: Int, count: Int)
    }

    package var lines: [Int] = []
    /// `fieldsPerRow` fields per row, row after row.
    package var fields: [Field] = []
    package var text: [UInt8] = []
    package var count: Int { lines.count }

    package init(capacity: Int, fieldsPerRow: Int) {
        lines.reserveCapacity(capacity)
        fields.reserveCapacity(capacity * fieldsPerRow)
        text.reserveCapacity(capacity * 64)
    }

    /// Empties the batch for the next rows, keeping its memory.
    package mutating func removeAll() {
        lines.removeAll(keepingCapacity: true)
        fields.removeAll(keepingCapacity: true)
        text.removeAll(keepingCapacity: true)
    }
}

/// A bounded queue of batches from one producer thread to one consumer, with the
/// producer's error (or end) after the last batch, and cancellation by the consumer.
/// Unchecked `Sendable`: every stored value is read and written under its `NSCondition` (a
/// condition variable, which `Mutex` has not).
package final class BatchChannel: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [ParsedBatch] = []
    private var isFinished = false
    private var isCancelled = false
    private var failure: Error?
    private let capacity: Int
    /// Batches the consumer is done with, for the producer to fill again.
    private var spares: [ParsedBatch] = []
    private static let maximumSpares = 4

    /// - Parameter capacity: batches that may wait; a producer on the consumer's own thread needs no limit.
    package init(capacity: Int = 4) { self.capacity = capacity }

    /// Hands a batch over; false if the consumer gave up.
    package func put(_ batch: ParsedBatch) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while queue.count >= capacity && !isCancelled { condition.wait() }
        if isCancelled { return false }
        queue.append(batch)
        condition.broadcast()
        return true
    }

    /// An empty batch: a spare one when there is one. A new batch's megabyte of arrays
    /// costs page faults and the kernel's zeroing.
    package func emptyBatch(capacity: Int, fieldsPerRow: Int) -> ParsedBatch {
        condition.lock()
        let spare = spares.popLast()
        condition.unlock()
        guard var batch = spare else { return ParsedBatch(capacity: capacity, fieldsPerRow: fieldsPerRow) }
        batch.removeAll()
        return batch
    }

    /// Gives a batch the consumer is done with back to the producer.
    package func recycle(_ batch: consuming ParsedBatch) {
        condition.lock()
        if spares.count < Self.maximumSpares { spares.append(batch) }
        condition.unlock()
    }

    package func finish(_ error: Error?) {
        condition.lock()
        isFinished = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// The next batch, nil at the end; throws the producer's error once its batches are taken.
    package func take() throws -> ParsedBatch? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !isFinished { condition.wait() }
        if !queue.isEmpty {
            let batch = queue.removeFirst()
            condition.broadcast()
            return batch
        }
        if let failure { throw failure }
        return nil
    }

    package func cancel() {
        condition.lock()
        isCancelled = true
        queue.removeAll()
        condition.broadcast()
        condition.unlock()
    }
}

extension ParsedBatch.Field {
    package var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }
}
