/// A place on the map.
public struct MapPlace: Sendable, Equatable, Hashable {
    /// Degrees.
    public var latitude: Double, longitude: Double
}
