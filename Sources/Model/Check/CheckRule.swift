import StationSchema

/// A data-quality rule that `check` runs over a version of the master.
///
/// The raw values are fixed identifiers: tests, waivers and other tools name rules by them.
public enum CheckRule: String, Codable, Sendable, CaseIterable {
    case openUnderClosed = "open-under-closed"
    case datesOutOfOrder = "dates-out-of-order"
    case coordinatesOutsideJapan = "coordinates-outside-japan"
    case closedWithoutDate = "closed-without-date"
    case connectionTooLong = "connection-too-long"
    case stationMovedFar = "station-moved-far"
    /// A move no real station makes (beyond `CheckLimits.implausibleMoveKilometres`): a typo in
    /// `lat` or `lon`, an error until it is fixed or waived. Shorter moves are `station-moved-far`.
    case stationMovedImplausibly = "station-moved-implausibly"
    case kanaNotKatakana = "kana-not-katakana"
    case groupDangling = "group-dangling"
    case duplicateNameOnLine = "duplicate-name-on-line"
    case lineWithoutStations = "line-without-stations"
    /// Ours: a connection of an open line that names a closed station (a closure that left
    /// its line's chain pointing at it, so the apps draw a track to a station that is gone).
    case connectionToClosedStation = "connection-to-closed-station"
    /// Ours: a connection of an open line with an end the master puts on another line (a plan
    /// that moved stations and not their connections, a revert that put back only one of them).
    case connectionOffItsLine = "connection-off-its-line"
    /// A value outside its column's domain (`ColumnDomain`): none can be written since the
    /// master has CHECK constraints, but a row written before keeps its value until mended.
    case valueOutsideDomain = "value-outside-domain"
    /// A value a source beside the primary gives otherwise than the primary, as of the source's
    /// last import (`source_disagreements`): the primary's stands until a curator takes the
    /// source's with `edit`, or waives it.
    case sourceDisagrees = "source-disagrees"

    /// How much a finding matters: an unwaived `error` stops a release, a `warning` is shown.
    public enum Severity: String, Codable, Sendable, Comparable {
        case error, warning

        /// Errors sort before warnings.
        public static func < (a: Severity, b: Severity) -> Bool { a == .error && b == .warning }
    }

    /// The tables whose rows the rule finds: a waiver names a row of one of them.
    public var tables: [MasterTable] {
        switch self {
        case .openUnderClosed, .coordinatesOutsideJapan: return [.lines, .stations]
        case .datesOutOfOrder, .closedWithoutDate, .stationMovedFar, .stationMovedImplausibly, .groupDangling, .duplicateNameOnLine: return [.stations]
        case .kanaNotKatakana: return [.companies, .lines, .stations]
        case .lineWithoutStations: return [.lines]
        case .connectionTooLong, .connectionToClosedStation, .connectionOffItsLine: return [.connections]
        case .valueOutsideDomain: return MasterTable.all
        case .sourceDisagrees: return [.companies, .lines, .stations]
        }
    }

    /// The rule's severity, fixed per rule.
    public var severity: Severity {
        switch self {
        case .openUnderClosed, .datesOutOfOrder, .coordinatesOutsideJapan, .stationMovedImplausibly, .valueOutsideDomain: return .error
        default: return .warning
        }
    }
}

/// The limits of the rules that take one; `check` exposes them as options.
public struct CheckLimits: Sendable, Equatable {
    /// `connection-too-long`: two connected stations further apart than this.
    public var connectionKilometres: Double = 50
    /// `station-moved-far`: a station whose position changed by more than this in the version.
    public var moveKilometres: Double = 1
    /// `station-moved-implausibly`: no station is rebuilt this far from where it stood (a line
    /// realigned, a terminus moved to a new airport: a few km); a move beyond it is a typo.
    public static let implausibleMoveKilometres: Double = 50

    /// Limits in kilometres; the defaults are what `release` checks with.
    public init(connectionKilometres: Double = 50, moveKilometres: Double = 1) {
        self.connectionKilometres = connectionKilometres
        self.moveKilometres = moveKilometres
    }
}

/// Where a station or line may lie: Japan's extent, generously (Okinotorishima is 20.4 °N,
/// Minamitorishima 153.98 °E, Yonaguni 122.9 °E, Etorofu 45.6 °N).
package enum JapanBounds {
    package static let latitude = 20.0...46.0
    package static let longitude = 122.0...154.0
}
