/// A small deterministic random generator (SplitMix64): the same seed, the same numbers,
/// on every machine, so generated data and weights can be reproduced.
public struct SplitMix64: Sendable {
    private var state: UInt64

    /// A generator whose numbers `seed` decides.
    public init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }

    /// The next number, uniform over `UInt64`.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// A number from 0 to `bound` − 1.
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// A number from 0 up to 1.
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// A hash of a key under a seed: the same pair, the same value, whatever else was drawn.
    public static func hash(_ seed: UInt64, _ key: Int64) -> UInt64 {
        mix(seed &+ UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15)
    }

    package static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SplitMix64 {
    /// A deterministic index in 0..<count from the seed and the square alone.
    package static func pick(seed: UInt64, square: Int, count: Int) -> Int {
        Int(hash(seed, Int64(square)) % UInt64(count))
    }
}
