import Synchronization

/// A `BlockingQueue` whose consumer hands each element back once done with it, for the producer
/// to fill again: the hand-over between a thread that reads a file and the one that uses what
/// it read. A fresh buffer of half a megabyte and more for every hand-over costs page faults
/// and the kernel's zeroing; a spare one costs neither.
package final class RecyclingQueue<Element: Sendable>: Sendable {
    private let elements: BlockingQueue<Element>
    /// Elements the consumer is done with, for the producer to fill again.
    private let spares = Mutex<[Element]>([])
    private static var maximumSpares: Int { 4 }

    /// - Parameter capacity: elements that may wait; a producer on the consumer's own thread needs no limit (`.max`).
    package init(capacity: Int) { elements = BlockingQueue(capacity: capacity) }

    /// Hands an element over, waiting while the queue is full; false if the consumer gave up.
    package func put(_ element: Element) -> Bool { elements.put(element) }

    /// Elements waiting for the consumer: none while it keeps up with the producer.
    package var waiting: Int { elements.waiting }

    /// An element the consumer is done with, if there is one: its contents are the producer's to clear.
    package func spare() -> Element? { spares.withLock { $0.popLast() } }

    /// Gives an element the consumer is done with back to the producer.
    package func recycle(_ element: consuming Element) {
        let element = element
        spares.withLock { if $0.count < Self.maximumSpares { $0.append(element) } }
    }

    /// The producer's end, or its error.
    package func finish(_ error: Error?) { elements.finish(error) }

    /// The next element, nil at the end; throws the producer's error once its elements are taken.
    package func take() throws -> Element? { try elements.take() }

    /// The consumer gives up: the producer's next `put` returns false.
    package func cancel() { elements.cancel() }
}
