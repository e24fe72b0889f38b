import Foundation
import StationSchema

/// One change of the version in words, with what the map needs to mark it.
public struct ReviewChange: Sendable, Equatable {
    /// How the map marks a changed station.
    public enum MapKind: String, Sendable, CaseIterable {
        /// `transferred`: the station passed to a line of another operator (its code kept).
        case new, closed, restored, moved, renamed, transferred, updated, duplicate
    }

    /// The master table of the row.
    public var table: String
    /// The row's key as in `updates.key_id`.
    public var key: String
    /// What the version did to it.
    public var kind: Update.Kind
    /// `八戸 (JR八戸線)`: the row's name, with its line for a station.
    public var title: String
    /// `line_cd 11415 JR北陸本線 → 99426 IRいしかわ鉄道線; moved 1.2 km`.
    public var words: String
    /// For a station (or a split's new station): its code, map kind and place.
    public var station: Int64?
    /// How the map marks it; nil for a row that is not drawn.
    public var mapKind: MapKind?
    /// Where the map marks it.
    public var latitude: Double?, longitude: Double?
    /// Where a moved station was, or a split's old station is.
    public var fromLatitude: Double?, fromLongitude: Double?
}
