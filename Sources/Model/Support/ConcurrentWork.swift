import Foundation

/// Work spread over every core with `DispatchQueue.concurrentPerform`, its results kept in index
/// order: the one place that hands the compiler's unprovable case to concurrent code.
package enum ConcurrentWork {
    /// Runs `work(index)` for each index in `0..<count` on every core and returns the results
    /// in index order. `work` may read what it captures, never write it: each iteration writes
    /// only its own slot of a buffer that outlives them all, read once all have ended.
    package static func results<Element>(count: Int, _ work: (Int) throws -> Element) -> [Result<Element, Error>] {
        var results = [Result<Element, Error>?](repeating: nil, count: count)
        withoutActuallyEscaping(work) { work in
            results.withUnsafeMutableBufferPointer { buffer in
                let shared = Unchecked(work: work, slots: buffer)
                DispatchQueue.concurrentPerform(iterations: count) { index in
                    shared.slots[index] = Result { try shared.work(index) }
                }
            }
        }
        return results.map { $0! }
    }

    /// The work and the slots, safe to share because of `results`' rule: the work only reads,
    /// and each iteration writes its own slot.
    private struct Unchecked<Element>: @unchecked Sendable {
        let work: (Int) throws -> Element
        let slots: UnsafeMutableBufferPointer<Result<Element, Error>?>
    }
}
