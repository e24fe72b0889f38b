import Foundation
import Testing

/// What a test needs beyond the package. Swift 6.3's `swift test` cannot skip by tag yet, so
/// a suite with one of these also carries `leftOutOfQuickRuns`: `STATION_ADMIN_QUICK_TESTS=1
/// swift test` runs the rest (README, "Tests").
extension Tag {
    /// Loads a page in headless Chromium.
    @Tag static var browser: Self
    /// Starts nginx in front of a release folder.
    @Tag static var nginx: Self
    /// Runs for many seconds on its own: processes killed at every step and run again, the
    /// real snapshots, every example of the guides, servers under load.
    @Tag static var slow: Self
}

extension Trait where Self == ConditionTrait {
    /// Skipped when `STATION_ADMIN_QUICK_TESTS=1`: for a suite tagged `browser`, `nginx` or `slow`.
    static var leftOutOfQuickRuns: Self {
        .disabled(if: ProcessInfo.processInfo.environment["STATION_ADMIN_QUICK_TESTS"] == "1",
                  "STATION_ADMIN_QUICK_TESTS=1: needs chromium, nginx or minutes")
    }
}
