/// One open connection on the map, from station to station.
public struct NetworkSegment: Sendable, Equatable {
    /// The two ends, in degrees.
    public var fromLongitude: Double, fromLatitude: Double, toLongitude: Double, toLatitude: Double
}
