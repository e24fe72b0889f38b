import Foundation

package enum Geography {
    /// The mean Earth radius, of the sphere the distances are measured on.
    package static let earthRadiusMetres = 6_371_008.8

    /// Great-circle distance (haversine, mean Earth radius).
    package static func metres(latitude: Double, longitude: Double, toLatitude: Double, longitude toLongitude: Double) -> Double {
        let radians = Double.pi / 180
        let dLat = (toLatitude - latitude) * radians, dLon = (toLongitude - longitude) * radians
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(latitude * radians) * cos(toLatitude * radians) * sin(dLon / 2) * sin(dLon / 2)
        return earthRadiusMetres * 2 * atan2(sqrt(a), sqrt(1 - a))
    }
}
