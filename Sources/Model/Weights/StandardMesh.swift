/// The Japanese standard grid squares (JIS X 0410, 標準地域メッシュ).
///
/// A first-order square spans 40′ of latitude by 1° of longitude (about 80 km); its code is
/// `⌊lat × 1.5⌋` then `⌊lon − 100⌋` (Tokyo station, 35.681 N 139.767 E: 5339). A second-order
/// square divides it 8 × 8 (about 10 km; Tokyo station: 533946).
package enum StandardMesh {
    package static func first(latitude: Double, longitude: Double) -> Int {
        Int((latitude * 1.5).rounded(.down)) * 100 + Int((longitude - 100).rounded(.down))
    }

    package static func second(latitude: Double, longitude: Double) -> Int {
        let latitudeInFirst = latitude * 1.5 - (latitude * 1.5).rounded(.down)
        let longitudeInFirst = (longitude - 100) - (longitude - 100).rounded(.down)
        return first(latitude: latitude, longitude: longitude) * 100
            + Int((latitudeInFirst * 8).rounded(.down)) * 10 + Int((longitudeInFirst * 8).rounded(.down))
    }

    /// A second-order square cut 2 × 2 (about 5 km; JIS X 0410's "2 倍地域メッシュ" grid).
    package static func quarterOfSecond(latitude: Double, longitude: Double) -> Int {
        let latitudeInSecond = latitude * 12 - (latitude * 12).rounded(.down)
        let longitudeInSecond = (longitude - 100) * 8 - ((longitude - 100) * 8).rounded(.down)
        return second(latitude: latitude, longitude: longitude) * 10
            + Int((latitudeInSecond * 2).rounded(.down)) * 2 + Int((longitudeInSecond * 2).rounded(.down))
    }
}
