import Dispatch
import Synchronization

/// Async work waited for by a thread that must block for it (a command's synchronous `run()`):
/// the one place that pairs a `Task` with a semaphore.
package enum SynchronousWait {
    /// Runs `operation` as a task and blocks until it ends; its value, or its error thrown here.
    package static func result<T: Sendable>(of operation: @escaping @Sendable () async throws -> T) throws -> T {
        let outcome = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<T, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}
