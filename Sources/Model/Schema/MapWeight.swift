/// A station's map weight (DOMAIN.md): its priority for a pin, smaller first.
///
/// The frozen migration in `MasterSchema` spells the default as the literal 13: migrations
/// are history. Everything else reads it here.
public enum MapWeight {
    /// Hand-assigned to major stations by curators; never overwritten by `weights`.
    public static let handAssigned = 1...9
    /// One open station per first-order standard grid square (~80 km).
    public static let firstOrderSample = 11
    /// One more per ~5 km cell that has no first-order sample.
    public static let secondOrderSample = 12
    /// Every other station, and the weight a new station starts with.
    public static let unsampled = 13

    /// Every weight a station may have.
    public static func contains(_ weight: Int64) -> Bool {
        let weight = Int(weight)
        return handAssigned.contains(weight) || weight == firstOrderSample || weight == secondOrderSample || weight == unsampled
    }

    /// How a message names the weights: "a map weight: 1 to 9 by hand, 11 or 12 sampled, 13 the rest".
    public static let expectation =
        "a map weight: \(handAssigned.lowerBound) to \(handAssigned.upperBound) by hand, \(firstOrderSample) or \(secondOrderSample) sampled, \(unsampled) the rest"
}
