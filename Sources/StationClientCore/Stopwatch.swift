import Foundation

/// Seconds since an instant, on the monotonic clock (`ContinuousClock` needs iOS 16).
package struct Stopwatch: Sendable {
    private let start = DispatchTime.now().uptimeNanoseconds

    package init() {}

    package var seconds: Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }
}
