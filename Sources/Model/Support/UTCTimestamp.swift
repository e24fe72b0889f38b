import Foundation

/// The time a version was committed or a waiver given, as the master stores it:
/// `2026-11-26T04:51:57Z` (ISO 8601, UTC, whole seconds).
package enum UTCTimestamp {
    /// By the C library: Foundation's formatters load time-zone and calendar data on their first
    /// use, a cost every import would pay for one timestamp.
    package static func text(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
