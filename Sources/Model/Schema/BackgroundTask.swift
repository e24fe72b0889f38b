import Foundation

/// Work started on another thread now, whose result (or error) `wait()` returns. Unchecked
/// `Sendable`: `outcome` is written once, before the group is left, and read only after it is
/// waited for. It lives in StationSchema to carry a test's client schema changes (a task-local
/// value) to the thread it starts.
package final class BackgroundTask<Result: Sendable>: @unchecked Sendable {
    private let group = DispatchGroup()
    private var outcome: Swift.Result<Result, Error>?

    package init(_ work: @escaping @Sendable () throws -> Result) {
        group.enter()
        // A task-local value is the starting task's, and a dispatched block is no task: a test's
        // client schema changes go with the work explicitly.
        let schemaChanges = ClientSchema.testChanges
        DispatchQueue.global().async { [self] in
            outcome = Swift.Result { try ClientSchema.$testChanges.withValue(schemaChanges) { try work() } }
            group.leave()
        }
    }

    /// Runs `body` on another thread once the work has ended, however it ended.
    package func whenDone(_ body: @escaping @Sendable () -> Void) {
        group.notify(queue: .global(), execute: body)
    }

    package func wait() throws -> Result {
        group.wait()
        return try outcome!.get()
    }
}
