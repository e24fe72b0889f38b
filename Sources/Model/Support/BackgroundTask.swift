import Foundation

/// Work started on another thread now, whose result (or error) `wait()` returns.
final class BackgroundTask<Result: Sendable>: @unchecked Sendable {
    private let group = DispatchGroup()
    private var outcome: Swift.Result<Result, Error>?

    init(_ work: @escaping @Sendable () throws -> Result) {
        group.enter()
        DispatchQueue.global().async { [self] in
            outcome = Swift.Result { try work() }
            group.leave()
        }
    }

    func wait() throws -> Result {
        group.wait()
        return try outcome!.get()
    }
}
