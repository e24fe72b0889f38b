import StationCSV
import StationSupport
import Testing

/// The import's UTF-8 check, held to the standard library's decoder.
struct FieldDecoderUTF8Tests {
    private func standardLibrarySays(_ bytes: [UInt8]) -> Bool {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    private func decoderSays(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { FieldDecoder.isValidUTF8($0) }
    }

    /// Each boundary of the table: overlong forms, surrogates, the last scalar and past it,
    /// stray and missing continuation bytes, and text that is.
    @Test(arguments: [
        [], [0x41], Array("東京駅".utf8), Array("ｶﾞ・ー".utf8), [0xF0, 0x9F, 0x9A, 0x83],
        [0xC0, 0x80], [0xC1, 0xBF], [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF], [0xE0, 0xA0, 0x80],
        [0xED, 0x9F, 0xBF], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xEE, 0x80, 0x80], [0xEF, 0xBF, 0xBF],
        [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80],
        [0xF5, 0x80, 0x80, 0x80], [0xFF], [0x80], [0xBF], [0xE6, 0x9D], [0xE6], [0xF0, 0x9F, 0x9A], [0x41, 0xE6, 0x9D, 0xB1, 0x80],
        [0x82, 0xA0], [0x93, 0x8C, 0x8B, 0x9E],
    ] as [[UInt8]])
    func theBoundariesOfTheTable(bytes: [UInt8]) {
        #expect(decoderSays(bytes) == standardLibrarySays(bytes), "\(bytes.map { String($0, radix: 16) })")
    }

    /// Random short byte strings, most made of pieces of UTF-8, some broken.
    @Test func randomBytesAsTheStandardLibrarySays() {
        var random = SplitMix64(seed: 26)
        let pieces: [[UInt8]] = [[0x41], [0xC3, 0xA9], [0xE6, 0x9D, 0xB1], [0xF0, 0x9F, 0x9A, 0x83], [0x80], [0xC3], [0xE6, 0x9D], [0xED, 0xA0, 0x80], [0xF4, 0x90]]
        var valid = 0
        for _ in 0..<50_000 {
            var bytes: [UInt8] = []
            for _ in 0..<random.below(6) {
                bytes += random.below(4) == 0 ? [UInt8(random.below(256))] : pieces[random.below(pieces.count)]
            }
            let expected = standardLibrarySays(bytes)
            if expected { valid += 1 }
            #expect(decoderSays(bytes) == expected, "\(bytes.map { String($0, radix: 16) })")
        }
        #expect(valid > 5_000 && valid < 45_000)
    }
}
