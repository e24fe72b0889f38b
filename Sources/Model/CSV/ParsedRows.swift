import Foundation
import StationSupport
import Synchronization

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

/// The batches of one file from its parsing thread to the import: a `BlockingQueue`, and the
/// batches the import is done with, handed back to be filled again.
package final class BatchChannel: Sendable {
    private let batches: BlockingQueue<ParsedBatch>
    /// Batches the consumer is done with, for the producer to fill again.
    private let spares = Mutex<[ParsedBatch]>([])
    private static let maximumSpares = 4

    /// - Parameter capacity: batches that may wait; a producer on the consumer's own thread needs no limit.
    package init(capacity: Int = 4) { batches = BlockingQueue(capacity: capacity) }

    /// Hands a batch over; false if the consumer gave up.
    package func put(_ batch: ParsedBatch) -> Bool { batches.put(batch) }

    /// An empty batch: a spare one when there is one. A new batch's megabyte of arrays
    /// costs page faults and the kernel's zeroing.
    package func emptyBatch(capacity: Int, fieldsPerRow: Int) -> ParsedBatch {
        guard var batch = spares.withLock({ $0.popLast() }) else { return ParsedBatch(capacity: capacity, fieldsPerRow: fieldsPerRow) }
        batch.removeAll()
        return batch
    }

    /// Gives a batch the consumer is done with back to the producer.
    package func recycle(_ batch: consuming ParsedBatch) {
        let batch = batch
        spares.withLock { if $0.count < Self.maximumSpares { $0.append(batch) } }
    }

    /// The producer's end, or its error.
    package func finish(_ error: Error?) { batches.finish(error) }

    /// The next batch, nil at the end; throws the producer's error once its batches are taken.
    package func take() throws -> ParsedBatch? { try batches.take() }

    /// The consumer gives up.
    package func cancel() { batches.cancel() }
}

extension ParsedBatch.Field {
    package var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }
}
