import Foundation
import StationSupport
import Testing

/// The master's timestamps, written by the C library, read as Foundation's ISO 8601 style reads
/// and writes them (whole seconds, UTC).
struct UTCTimestampTests {
    @Test(arguments: [0.0, 999_999_999.9, 1_000_000_000, 1_795_000_000.5, 4_102_444_799])
    func theTextIsFoundationsISO8601(secondsSince1970: Double) throws {
        let date = Date(timeIntervalSince1970: secondsSince1970)
        let text = UTCTimestamp.text(date)
        #expect(text == date.formatted(.iso8601))
        #expect(try Date(text, strategy: .iso8601) == Date(timeIntervalSince1970: secondsSince1970.rounded(.down)))
    }

    @Test func aKnownMoment() {
        #expect(UTCTimestamp.text(Date(timeIntervalSince1970: 1_000_000_000)) == "2001-09-09T01:46:40Z")
    }
}
