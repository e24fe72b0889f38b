import Foundation

/// A bounded first-in, first-out queue from one producer thread to one consumer: the producer
/// waits while it is full, the consumer while it is empty; the producer's end (or its error)
/// comes after the last element, and the consumer may give up, which the producer's next `put`
/// learns. The one blocking queue of the library (a delta's bytes to deflate, an import file's
/// parsed batches).
///
/// Unchecked `Sendable`: every stored value is read and written under its `NSCondition` (a
/// condition variable, which `Mutex` has not).
package final class BlockingQueue<Element>: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue = FIFO<Element>()
    private var isFinished = false
    private var isCancelled = false
    private var failure: Error?
    private let capacity: Int

    /// A queue where `capacity` elements may wait; a producer on the consumer's own thread needs no limit (`.max`).
    package init(capacity: Int) { self.capacity = capacity }

    /// Hands `element` over, waiting while the queue is full; false if the consumer gave up.
    package func put(_ element: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while queue.count >= capacity && !isCancelled { condition.wait() }
        if isCancelled { return false }
        queue.append(element)
        condition.broadcast()
        return true
    }

    /// Elements waiting for the consumer: none while it keeps up with the producer.
    package var waiting: Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count
    }

    /// The producer's end: nothing follows but `error`, thrown once the elements are taken.
    package func finish(_ error: Error? = nil) {
        condition.lock()
        isFinished = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// The next element, nil at the end; throws the producer's error once its elements are taken.
    package func take() throws -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !isFinished { condition.wait() }
        if !queue.isEmpty {
            let element = queue.removeFirst()
            condition.broadcast()
            return element
        }
        if let failure { throw failure }
        return nil
    }

    /// The consumer gives up: what waits is dropped, and the producer's `put` returns false.
    package func cancel() {
        condition.lock()
        isCancelled = true
        queue.removeAll()
        condition.broadcast()
        condition.unlock()
    }
}

/// First in, first out over an array and the index of its head: `removeFirst` is O(1) (the
/// taken slots are dropped once they are half the storage, amortized O(1)), where an array's own
/// `removeFirst` moves every element left, O(n) for an unbounded queue's backlog.
struct FIFO<Element> {
    private var storage: [Element?] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { count == 0 }

    mutating func append(_ element: Element) { storage.append(element) }

    /// The oldest element; the queue must not be empty.
    mutating func removeFirst() -> Element {
        let element = storage[head]!
        storage[head] = nil
        head += 1
        if head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    mutating func removeAll() {
        storage.removeAll()
        head = 0
    }
}
