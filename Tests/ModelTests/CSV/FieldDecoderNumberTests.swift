import Foundation
import StationCSV
import StationSupport
import Testing

/// The import's short decimals, held bit for bit to `strtod`, which reads every other number.
struct FieldDecoderNumberTests {
    private func strtodSays(_ text: String) -> Double? {
        text.withCString { start in
            var end: UnsafeMutablePointer<CChar>?
            let value = strtod(start, &end)
            return end == UnsafeMutablePointer(mutating: start) + text.utf8.count ? value : nil
        }
    }

    private func shortDecimal(_ text: String) -> Double? {
        Array(text.utf8).withUnsafeBufferPointer { FieldDecoder.shortDecimal($0) }
    }

    @Test(arguments: [
        "0", "-0", "+0", "0.0", "-0.0", "1", "-1", "5.", ".5", "-.5", "139.7671248", "35.681236", "-35.6812",
        "0.1", "0.3", "2.675", "999999999999999", "99999999999999.9", "0.12345678901234", "0.00000000000001",
        "123456789.012345", "00000000000001.5",
    ])
    func theDoubleStrtodGives(text: String) throws {
        let value = try #require(shortDecimal(text), "\(text) is a short decimal")
        #expect(value.bitPattern == strtodSays(text)?.bitPattern, "\(text)")
    }

    /// Left to strtod: more than 15 digits, an exponent, two points, no digit, anything else.
    @Test(arguments: ["1234567890123456", "0.123456789012345", "1e5", "1E-3", "1.2.3", ".", "-", "+", "", "1,5", " 1", "0x10", "inf", "nan", "--1"])
    func anythingElseIsLeftToStrtod(text: String) {
        #expect(shortDecimal(text) == nil, "\(text)")
    }

    /// Random decimals of 1 to 15 digits, with and without a sign, a point and leading zeros.
    @Test func randomDecimalsAsStrtodSays() {
        var random = SplitMix64(seed: 19)
        var checked = 0
        for _ in 0..<200_000 {
            let digits = 1 + random.below(15)
            let point = random.below(4) == 0 ? nil : random.below(digits + 1)
            var text = ["", "-", "+"][random.below(3)]
            for position in 0..<digits {
                if position == point { text += "." }
                text += String(random.below(10))
            }
            if point == digits { text += "." }
            guard let value = shortDecimal(text) else {
                Issue.record("\(text) was not read")
                continue
            }
            #expect(value.bitPattern == strtodSays(text)?.bitPattern, "\(text)")
            checked += 1
        }
        #expect(checked == 200_000)
    }
}
