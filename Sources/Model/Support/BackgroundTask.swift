import Dispatch
import Synchronization

/// Work started on another thread now, whose result (or error) `wait()` returns.
package final class BackgroundTask<Result: Sendable>: Sendable {
    private let group = DispatchGroup()
    private let outcome = Mutex<Swift.Result<Result, any Error>?>(nil)

    package init(_ work: @escaping @Sendable () throws -> Result) {
        group.enter()
        DispatchQueue.global().async { [self] in
            let result = Swift.Result { try work() }
            outcome.withLock { $0 = result }
            group.leave()
        }
    }

    /// Runs `body` on another thread once the work has ended, however it ended.
    package func whenDone(_ body: @escaping @Sendable () -> Void) {
        group.notify(queue: .global(), execute: body)
    }

    package func wait() throws -> Result {
        group.wait()
        return try outcome.withLock { $0! }.get()
    }
}
