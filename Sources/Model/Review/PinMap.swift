import Foundation
import StationWeights

/// The pins a phone shows at one extent, with the weights of the version.
public struct PinMap: Sendable {
    /// How wide a pin map is drawn, in pixels (its height follows the extent).
    public static let width = 300.0

    /// The extent drawn.
    public var extent: MapExtent
    /// How the top pins spread over it.
    public var spread: MapSpread
    /// Open stations in view `[lat, lon]`, one per pixel of the map, and the top pins
    /// `[lat, lon, weight]` in the client's order.
    public var stations: [[Double]]
    /// The top pins, `[lat, lon, weight]`, in the client's order.
    public var pins: [[Double]]
}
