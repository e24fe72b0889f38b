import Foundation

/// A value shared between threads, behind a lock.
///
/// Neither `Mutex` (iOS 18) nor `NSLocking.withLock` (iOS 17) is there on the systems this
/// library supports (iOS 15, macOS 12 on), so it holds an `NSLock` itself; the value is reached
/// only inside `withValue`, which is what makes the `@unchecked Sendable` sound.
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    package func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
