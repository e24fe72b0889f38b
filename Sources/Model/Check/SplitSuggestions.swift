import Foundation
import GRDB
import GRDBSQLite
import StationHistory
import StationSchema
import StationSupport

/// A station whose visits should also count for another station: a DUPLICATE a curator
/// may record, with why it looks so and how sure the rule is.
public struct SplitSuggestion: Codable, Sendable, Equatable {
    /// Metres within which a closed and an added station count as near, unless asked otherwise.
    public static let defaultRadius = 500.0

    /// The version whose changes suggest it.
    public var version: Int
    /// The station closed (or left) in the version, whose records phones would copy.
    public var old: Int64
    /// The old station's name.
    public var oldName: String
    /// The station added in the version that takes its place.
    public var new: Int64
    /// The new station's name.
    public var newName: String
    /// Why, in words, naming the operators and the shape.
    public var reason: String
    /// 0…1: how often a curator should accept this shape; the list is ranked by it.
    public var confidence: Double
    /// The distance between the two, when both have coordinates.
    public var metres: Int?
    /// A plan line that records the split.
    public var planLine: String
    /// Within the radius the suggestions were made with.
    package var isNear = false

    package enum CodingKeys: String, CodingKey {
        case version, old, new, reason, confidence, metres
        case oldName = "old_name", newName = "new_name", planLine = "plan_line"
    }

    /// Every key, null for no value (docs/json.md).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(old, forKey: .old)
        try container.encode(oldName, forKey: .oldName)
        try container.encode(new, forKey: .new)
        try container.encode(newName, forKey: .newName)
        try container.encode(reason, forKey: .reason)
        try container.encode(confidence, forKey: .confidence)
        try container.encode(metres, forKey: .metres)
        try container.encode(planLine, forKey: .planLine)
    }
}

extension Checker {
    /// The DUPLICATEs that `version` (default: the newest) seems to call for; see `SplitFinder`.
    ///
    /// - Parameters:
    ///   - version: the version whose closures and additions are paired; nil for the newest.
    ///   - radius: metres within which a closed and an added station count as near.
    ///   - all: every candidate pair, instead of the assignment (`SplitFinder.assigned`).
    /// - Throws: `NoSuchVersion` for a version the master does not have.
    public func suggestSplits(version: Int? = nil, radius: Double = SplitSuggestion.defaultRadius, all: Bool = false) throws -> [SplitSuggestion] {
        try master.read { db in
            let newest = try MasterDatabase.dataVersion(db)
            let version = version ?? newest
            try NoSuchVersion.require(version, newest: newest)
            return try SplitFinder.suggest(db, version: version, radius: radius, all: all)
        }
    }
}

extension SplitFinder {
    /// `MasterDatabase.suggestSplits`, inside a transaction that may not be committed yet (an
    /// import's report), with what the caller already has (`suggestions`).
    ///
    /// - Parameter adopted: the provisional stations an import adopted: each has its split
    ///   already (upstream's station), and no pair from it is suggested.
    package static func suggest(_ db: Database, version: Int, radius: Double = SplitSuggestion.defaultRadius, all: Bool = false,
                                changed: Changed? = nil, placesBefore: StationPlaces? = nil,
                                leavingOut adopted: Set<Int64> = []) throws -> [SplitSuggestion] {
        let candidates = try SplitFinder(version: version, radius: radius).suggestions(db, changed: changed, placesBefore: placesBefore)
        return (all ? candidates : SplitFinder.assigned(candidates)).filter { !adopted.contains($0.old) }
    }
}

/// Finds the shapes of a split in one version's changes (DOMAIN.md, "Splits: DUPLICATE, and what
/// a user keeps"), most certain first:
///
/// 1. **A transfer with a shared station** (Aoimori 2010, Hokuriku 2024): stations pass from
///    operator A's line to operator B's (codes kept, or closed and re-added under B), and a new
///    station of B appears at a station of A (same group, or same name within `radius`): a
///    DUPLICATE from A's station, preferring the one on the line the stations left.
/// 2. **Closed and added together**: a station closes and one opens that shares its name,
///    group or place; not across operators while the closed station's operator still serves
///    the group (an express that stops serving a hub is no split).
/// 3. **A handover to a station another operator already had** (JR 盛 → 三陸鉄道 盛): the
///    closed station's operator leaves the group, and another's open station of the same name
///    carries on; not when this version transfers that section to that operator (JR 金沢 in
///    2024: the section passed to IR with its codes, and IR's 金沢 had its own visits all along).
package struct SplitFinder {
    package let version: Int
    package let radius: Double

    package init(version: Int, radius: Double = SplitSuggestion.defaultRadius) {
        self.version = version
        self.radius = radius
    }

    package struct Station: Sendable {
        package let code: Int64, group: Int64, name: String, latitude: Double?, longitude: Double?
        package let line: Int64, company: Int64, companyName: String, isOpen: Bool

        package init(_ row: Row) {
            self.init(row, company: row["company_cd"], companyName: row["company_name"])
        }

        /// A station row without its operator's columns, and its operator.
        init(_ row: Row, company: Int64, companyName: String) {
            code = row["station_cd"]; name = row["station_name"]
            group = row["station_g_cd"] ?? code
            latitude = row["lat"]; longitude = row["lon"]
            line = row["line_cd"]
            self.company = company
            self.companyName = companyName
            isOpen = (row["e_status"] as Int) != MasterTable.closedStatus
        }

        package func metres(to other: Station) -> Double? {
            guard let a = latitude, let b = longitude, let c = other.latitude, let d = other.longitude else { return nil }
            return Geography.metres(latitude: a, longitude: b, toLatitude: c, longitude: d)
        }
    }

    package struct Transfer: Hashable {
        package let from: Int64, to: Int64
    }

    /// A station group served by one operator.
    private struct GroupOperator: Hashable {
        let group: Int64, company: Int64
    }

    /// What shows stations passing from one operator to another in the version.
    package struct TransferEvidence {
        /// The lines the stations left.
        package var sourceLines: Set<Int64> = []
        /// Stations that kept their codes.
        package var moved = 0
        /// New codes of stations closed under one operator and added under the other.
        package var readded: Set<Int64> = []

        /// A station re-added is no evidence for its own pair.
        package func shows(besides code: Int64) -> Bool { moved > 0 || !readded.subtracting([code]).isEmpty }
    }

    /// The stations the version closed and added, with what `KeyScan` looks for among the others.
    package struct Changed: Sendable {
        package let closed: [Station], added: [Station]
        package let keyScan: KeyScan

        init(closed: [Station], added: [Station], radius: Double) {
            self.closed = closed
            self.added = added
            keyScan = KeyScan(added: added, closed: closed, radius: radius)
        }
    }

    /// The stations the version closed and added; nil for the first version (nothing before it
    /// can have split).
    package func changed(_ db: Database) throws -> Changed? {
        guard version > 1 else { return nil }
        return Changed(closed: try changed(.delete, db), added: try changed(.insert, db), radius: radius)
    }

    /// - Parameters:
    ///   - changed: `changed(db)`, if the caller has it.
    ///   - placesBefore: the stations as they were before the version (kept by an import's
    ///     compare): only the stations the version changed are then read here, not every station.
    package func suggestions(_ db: Database, changed: Changed? = nil, placesBefore: StationPlaces? = nil) throws -> [SplitSuggestion] {
        guard let changed = try changed ?? self.changed(db) else { return [] }
        let (closed, added) = (changed.closed, changed.added)
        if added.isEmpty && closed.isEmpty { return [] }
        let addedStations = AddedStations(added, radius: radius)
        let transfers = try self.transfers(closed: closed, added: addedStations, db)
        // A provisional station an import adopted has its successor, upstream's own code, and its
        // records are there already: another pair from it would copy them onto a second station.
        let adopted = try db.tableExists("merge_notes") ? Set(try Int64.fetchAll(db, sql: """
            SELECT CAST(key_id AS INTEGER) FROM merge_notes WHERE table_name = 'stations' AND outcome = 'adopted'
            """)) : []
        var offers = Offers(finder: self, recorded: Set(try UpdateLog.splits(db).map { "\($0.old)→\($0.new)" }), adopted: adopted)
        let scan = changed.keyScan
        let keys = try placesBefore.map { try scan.patching(scan.keys(in: $0), withStationsChangedIn: version, db) }
            ?? scan.keys(db, placesKnownExceptIn: version)
        try offerTransfersWithASharedStation(added: added, transfers: transfers, keys: keys, into: &offers, db)
        let openInGroups = try openStations(inGroupsOf: closed, keys: keys.inClosedGroups, db)
        // Looked up once per closed station, not scanned for each pair.
        var openCodes: [GroupOperator: [Int64]] = [:]
        for station in openInGroups { openCodes[GroupOperator(group: station.group, company: station.company), default: []].append(station.code) }
        let stillServed = Set(closed.filter { old in openCodes[GroupOperator(group: old.group, company: old.company)]?.contains { $0 != old.code } ?? false }.map(\.code))
        offerClosedAndAdded(closed: closed, added: addedStations, stillServed: stillServed, into: &offers)
        offerHandovers(closed: closed.filter { !stillServed.contains($0.code) }, openInGroups: openInGroups, transfers: transfers, into: &offers)
        return offers.found.values.sorted { ($1.confidence, $0.old, $0.new) < ($0.confidence, $1.old, $1.new) }
    }

    /// The pairs found, the strongest of each kept: never a split recorded already, nor one
    /// from a provisional station an import adopted.
    private struct Offers {
        let finder: SplitFinder
        let recorded: Set<String>
        let adopted: Set<Int64>
        var found: [String: SplitSuggestion] = [:]

        mutating func offer(_ old: Station, _ new: Station, _ reason: String, _ confidence: Double) {
            let pair = "\(old.code)→\(new.code)"
            guard old.code != new.code, !recorded.contains(pair), !adopted.contains(old.code),
                  (found[pair]?.confidence ?? 0) < confidence else { return }
            found[pair] = SplitSuggestion(
                version: finder.version, old: old.code, oldName: old.name, new: new.code, newName: new.name,
                // Rounded: the sum 0.35 + 0.1 is 0.44999999999999996 in binary, and JSON would say so.
                reason: reason, confidence: (confidence * 100).rounded() / 100, metres: old.metres(to: new).map { Int($0.rounded()) },
                planLine: "{\"op\": \"record_split\", \"old\": \(old.code), \"new\": \(new.code)}", isNear: finder.near(old, new))
        }
    }

    /// The transfers of lines between operators, and stations closed under one operator and added
    /// under another as the same station (by group, or by name nearby): a transfer too.
    private func transfers(closed: [Station], added: AddedStations, _ db: Database) throws -> [Transfer: TransferEvidence] {
        var transfers = try movedAcrossOperators(db)
        for old in closed {
            for new in added.named(old.name) where new.company != old.company && (new.group == old.group || near(old, new)) {
                transfers[Transfer(from: old.company, to: new.company), default: TransferEvidence()].sourceLines.insert(old.line)
                transfers[Transfer(from: old.company, to: new.company)]!.readded.insert(new.code)
            }
        }
        return transfers
    }

    /// 1. Transfers with a shared station: the new operator's station added at the old one's.
    private func offerTransfersWithASharedStation(added: [Station], transfers: [Transfer: TransferEvidence], keys: KeyScan.Keys,
                                                  into offers: inout Offers, _ db: Database) throws {
        let shared = try stationsBefore(sharingWith: added, keys: keys.sharing, db)
        for new in added {
            for (transfer, evidence) in transfers where transfer.to == new.company && evidence.shows(besides: new.code) {
                let sourceLines = evidence.sourceLines
                let candidates = shared.filter {
                    $0.company == transfer.from && $0.code != new.code && ($0.group == new.group || ($0.name == new.name && near($0, new)))
                }
                guard let old = candidates.min(by: { rank($0, sourceLines) < rank($1, sourceLines) }) else { continue }
                let onSource = sourceLines.contains(old.line)
                let (from, to) = Self.companyNames(old, new)
                offers.offer(old, new, "stations passed from \(from) to \(to) in this version, and \(new.code) is "
                    + "\(new.companyName)'s new station at \(old.companyName)'s \(old.name) (\(old.group == new.group ? "same group" : "same name nearby")"
                    + (onSource ? ", on the line the stations left" : "") + ")", onSource ? 0.9 : 0.75)
            }
        }
    }

    /// 2. Closed and added together: by name, group and distance; another operator's station
    /// only where the closed station's operator no longer serves its group.
    private func offerClosedAndAdded(closed: [Station], added: AddedStations, stillServed: Set<Int64>, into offers: inout Offers) {
        for old in closed {
            for new in added.candidates(for: old) {
                if new.company != old.company && stillServed.contains(old.code) { continue }
                var reasons: [String] = [], confidence = 0.35
                if old.name == new.name { reasons.append("same name"); confidence += 0.25 }
                if old.group == new.group { reasons.append("same group"); confidence += 0.15 }
                if let metres = old.metres(to: new), metres <= radius {
                    reasons.append("\(Int(metres.rounded())) m apart"); confidence += 0.1
                }
                guard !reasons.isEmpty else { continue }
                offers.offer(old, new, "closed and added in this version: " + reasons.joined(separator: ", "), confidence)
            }
        }
    }

    /// 3. Handovers to another operator's existing station of the same name and group, from a
    /// closed station whose operator no longer serves its group.
    private func offerHandovers(closed: [Station], openInGroups: [Station], transfers: [Transfer: TransferEvidence], into offers: inout Offers) {
        for old in closed {
            for other in openInGroups where other.group == old.group && other.company != old.company && other.name == old.name {
                if transfers[Transfer(from: old.company, to: other.company)] != nil { continue }
                let (from, to) = Self.companyNames(old, other)
                offers.offer(old, other, "\(from) left the station: its \(old.name) closed, and \(to)'s "
                    + "open \(other.name) (same name and group) carries on", 0.6)
            }
        }
    }

    /// The two stations' operators as a reason names them: two companies of one name (a
    /// provisional one and upstream's) are told apart by code.
    private static func companyNames(_ old: Station, _ new: Station) -> (from: String, to: String) {
        old.companyName == new.companyName
            ? ("\(old.companyName) (\(old.company))", "\(new.companyName) (\(new.company))") : (old.companyName, new.companyName)
    }

    /// An assignment rather than every candidate: where a station has a successor of its own
    /// name within the radius (a line renumbered: every station closed and added again under a
    /// new code), the weaker pairs of that station, and the weaker pairs naming that successor,
    /// are a neighbour's and go. Pairs as strong as the best stay (a junction renumbered onto two
    /// lines has two successors of its name).
    package static func assigned(_ candidates: [SplitSuggestion]) -> [SplitSuggestion] {
        var bestOfOld: [Int64: Double] = [:], bestOfNew: [Int64: Double] = [:]
        for pair in candidates where pair.oldName == pair.newName && pair.isNear {
            bestOfOld[pair.old] = max(bestOfOld[pair.old] ?? 0, pair.confidence)
            bestOfNew[pair.new] = max(bestOfNew[pair.new] ?? 0, pair.confidence)
        }
        return candidates.filter { pair in
            pair.confidence >= (bestOfOld[pair.old] ?? 0) && pair.confidence >= (bestOfNew[pair.new] ?? 0)
        }
    }

    fileprivate func near(_ a: Station, _ b: Station) -> Bool { (a.metres(to: b) ?? .infinity) <= radius }

    /// Smaller is likelier: on a line the stations left, then open, then same name.
    private func rank(_ station: Station, _ sourceLines: Set<Int64>) -> (Int, Int, Int64) {
        (sourceLines.contains(station.line) ? 0 : 1, station.isOpen ? 0 : 1, station.code)
    }

    private static let columns = "s.station_cd, s.station_g_cd, s.station_name, s.lat, s.lon, s.line_cd, s.e_status, l.company_cd, c.company_name"

    /// The stations the version inserted or closed, with their operator before the version
    /// (a closed station's line may close with it).
    private func changed(_ kind: Update.Kind, _ db: Database) throws -> [Station] {
        let keys = "(\(UpdateLog.changedKeys(of: .stations, in: version, kinds: [kind])))"
        let isChanged = "s.station_cd IN (SELECT CAST(key_id AS INTEGER) FROM \(keys))"
        // A closed station's line as it was before, rebuilt for those lines alone, not every line's state.
        let linesBefore = VersionedState(table: .lines, version: version - 1)
            .select(restrictedTo: "(SELECT DISTINCT CAST(s.line_cd AS TEXT) AS key_id FROM stations s WHERE \(isChanged))")
        let lines = kind == .insert ? "lines" : "(\(linesBefore))"
        return try Row.fetchAll(db, sql: """
            SELECT \(Self.columns) FROM stations s
            JOIN \(lines) l ON l.line_cd = s.line_cd
            JOIN companies c ON c.company_cd = l.company_cd
            WHERE \(isChanged)
            ORDER BY s.station_cd
            """).map(Station.init)
    }

    /// Stations the version moved to a line of another operator: operator before → after,
    /// with the lines they left.
    private func movedAcrossOperators(_ db: Database) throws -> [Transfer: TransferEvidence] {
        let before = VersionedState.statesBefore(version, of: UpdateLog.changedKeys(of: .stations, in: version, kinds: [.update]), in: .stations)
        var moves: [(lineLeft: Int64, operatorNow: Int64)] = []
        for row in try Row.fetchAll(db, sql: """
            SELECT p.line_cd, nl.company_cd FROM (\(before)) p
            CROSS JOIN stations n ON n.station_cd = p.station_cd
            JOIN lines nl ON nl.line_cd = n.line_cd
            WHERE p.line_cd <> n.line_cd AND nl.company_cd IS NOT NULL
            """) {
            moves.append((row[0], row[1]))
        }
        let operatorsBefore = try operatorsBefore(ofLines: Set(moves.map(\.lineLeft)), db)
        var transfers: [Transfer: TransferEvidence] = [:]
        for move in moves {
            guard let from = operatorsBefore[move.lineLeft], from != move.operatorNow else { continue }
            transfers[Transfer(from: from, to: move.operatorNow), default: TransferEvidence()].sourceLines.insert(move.lineLeft)
            transfers[Transfer(from: from, to: move.operatorNow)]!.moved += 1
        }
        return transfers
    }

    /// As they were before the version: the stations in the groups of `added`, or of their names,
    /// with the operator of their line then (named as the operator is named now).
    private func stationsBefore(sharingWith added: [Station], keys: [Int64], _ db: Database) throws -> [Station] {
        guard !added.isEmpty else { return [] }
        let before = VersionedState(table: .stations, version: version - 1).select(restrictedTo: "(SELECT key_id FROM candidate_keys)")
        let rows = try Row.fetchAll(db, sql: """
            WITH candidate_keys(key_id) AS (SELECT value FROM json_each(?))
            SELECT s.station_cd, s.station_g_cd, s.station_name, s.lat, s.lon, s.line_cd, s.e_status FROM (\(before)) s
            """, arguments: [Self.jsonKeys(keys)])
        let operators = try operatorsBefore(ofLines: Set(rows.compactMap { $0["line_cd"] as Int64? }), db)
        var names: [Int64: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT company_cd, company_name FROM companies") { names[row[0]] = row[1] }
        return rows.compactMap { row in
            guard let line = row["line_cd"] as Int64?, let company = operators[line], let name = names[company] else { return nil }
            return Station(row, company: company, companyName: name)
        }
    }

    /// The operator of each of `lines` before the version; a line that had none is left out.
    /// Only those lines are rebuilt from the history: every line rebuilt would join all of a
    /// large master's lines into the two lookups above, for the few a small import touches.
    private func operatorsBefore(ofLines lines: Set<Int64>, _ db: Database) throws -> [Int64: Int64] {
        guard !lines.isEmpty else { return [:] }
        let state = VersionedState(table: .lines, version: version - 1).select(restrictedTo: "(SELECT key_id FROM line_keys)")
        var operators: [Int64: Int64] = [:]
        for row in try Row.fetchAll(db, sql: """
            WITH line_keys(key_id) AS (SELECT value FROM json_each(?))
            SELECT line_cd, company_cd FROM (\(state)) WHERE company_cd IS NOT NULL
            """, arguments: [Self.jsonKeys(Array(lines))]) {
            operators[row[0]] = row[1]
        }
        return operators
    }

    /// Integer keys as a JSON array of `key_id` texts, for `json_each`.
    private static func jsonKeys(_ keys: [Int64]) throws -> String {
        String(decoding: try JSONEncoder().encode(keys.map(String.init)), as: UTF8.self)
    }

    /// Open stations now in the groups of `closed`, of `keys` (every station in those groups).
    private func openStations(inGroupsOf closed: [Station], keys: [Int64], _ db: Database) throws -> [Station] {
        guard !closed.isEmpty, !keys.isEmpty else { return [] }
        return try Row.fetchAll(db, sql: """
            SELECT \(Self.columns) FROM stations s
            JOIN lines l ON l.line_cd = s.line_cd
            JOIN companies c ON c.company_cd = l.company_cd
            WHERE s.station_cd IN (\(keys.map(String.init).joined(separator: ", "))) AND s.e_status <> \(MasterTable.closedStatus)
            """).map(Station.init)
    }

}

/// The codes of the stations in the groups of a version's added stations or named as one of
/// them (the candidates of a shared station), and of those in the groups of its closed ones:
/// found in one pass over the stations, the groups and names held in memory. As SQL (`IN` lists
/// ORed, once per list) each of a million rows probed three temporary B-trees. Names compare as
/// bytes, as SQLite compares text.
package struct KeyScan: Sendable {
    /// Both lists in code order.
    package struct Keys: Sendable {
        package var sharing: [Int64], inClosedGroups: [Int64]
    }

    let addedGroups: Set<Int64>, closedGroups: Set<Int64>
    let names: Set<[UInt8]>, nameHashes: Set<UInt64>
    /// Where each name's added stations are: a station sharing only its name is a candidate only
    /// within `radius` of one of them (`SplitFinder.near`), so the others need not be read again
    /// as they were before the version. Names so common that thousands of stations share them
    /// would otherwise bring every one of those.
    let placesByName: [[UInt8]: [(latitude: Double, longitude: Double)]]
    /// `placesByName` by the names' hashes, for `StationPlaces`, which keeps only those.
    let placesByNameHash: [UInt64: [(latitude: Double, longitude: Double)]]
    let radius: Double

    init(added: [SplitFinder.Station], closed: [SplitFinder.Station], radius: Double) {
        addedGroups = Set(added.map(\.group))
        closedGroups = Set(closed.map(\.group))
        names = Set(added.map { Array($0.name.utf8) })
        nameHashes = Set(names.map { $0.withUnsafeBufferPointer(Self.hash) })
        var places: [[UInt8]: [(latitude: Double, longitude: Double)]] = [:]
        for station in added {
            guard let latitude = station.latitude, let longitude = station.longitude else { continue }
            places[Array(station.name.utf8), default: []].append((latitude, longitude))
        }
        placesByName = places
        placesByNameHash = Dictionary(places.map { ($0.key.withUnsafeBufferPointer(Self.hash), $0.value) }, uniquingKeysWith: +)
        self.radius = radius
    }

    private var isEmpty: Bool { addedGroups.isEmpty && closedGroups.isEmpty }

    /// The keys among `places`, the stations as they were before the version: a station sharing
    /// only a name is kept when it was within the radius of an added station of that name. A
    /// hash shared by two names, or a place rounded to single precision, keeps a few more (the
    /// radius is widened by the rounding's metres), never fewer.
    package func keys(in places: StationPlaces) -> Keys {
        var found = Keys(sharing: [], inClosedGroups: [])
        guard !isEmpty else { return found }
        let reach = radius + Self.singlePrecisionMetres
        for station in places.entries {
            func inGroups(_ groups: Set<Int64>) -> Bool { groups.contains(station.code) || groups.contains(station.group) }
            if inGroups(closedGroups) { found.inClosedGroups.append(station.code) }
            if inGroups(addedGroups) {
                found.sharing.append(station.code)
            } else if let namesakes = placesByNameHash[station.nameHash], !station.latitude.isNaN, !station.longitude.isNaN {
                let (latitude, longitude) = (Double(station.latitude), Double(station.longitude))
                if namesakes.contains(where: { Geography.metres(latitude: latitude, longitude: longitude, toLatitude: $0.latitude, longitude: $0.longitude) <= reach }) {
                    found.sharing.append(station.code)
                }
            }
        }
        return found
    }

    /// More than a place rounded to a `Float` can move: half a unit in the last place of a
    /// longitude under 256° is 2^-16° (under 2 m), and of a latitude less.
    private static let singlePrecisionMetres = 10.0

    /// The keys among every station `db` reads, as the master is after `version`: a station the
    /// version changed is kept by its name alone (where it was before may have been near), any
    /// other by its name only when within the radius of an added station of that name.
    package func keys(_ db: Database, placesKnownExceptIn version: Int) throws -> Keys {
        guard !isEmpty else { return Keys(sharing: [], inClosedGroups: []) }
        let changed = Set(try Int64.fetchAll(db, sql: "SELECT CAST(key_id AS INTEGER) FROM (\(UpdateLog.changedKeys(of: .stations, in: version)))"))
        return try keys(db, sql: Self.everyStation, nearOnly: true, exempt: changed)
    }

    private static let everyStation = "SELECT station_cd, station_g_cd, station_name, lat, lon FROM stations ORDER BY station_cd"

    /// `before`, the keys among the stations as they were before `version`, made the keys among
    /// the stations now: the stations the version changed (added ones too) are looked at again
    /// as they are now, and every other one is as it was (stations are never removed).
    package func patching(_ before: Keys, withStationsChangedIn version: Int, _ db: Database) throws -> Keys {
        // Looked at as they are now, kept by name alone: where they were before may have been near.
        let changedNow = try keys(db, sql: """
            SELECT station_cd, station_g_cd, station_name, lat, lon FROM stations
            WHERE station_cd IN (SELECT CAST(key_id AS INTEGER) FROM (\(UpdateLog.changedKeys(of: .stations, in: version))))
            ORDER BY station_cd
            """, nearOnly: false, exempt: [], collectingCodes: true)
        func merged(_ kept: [Int64], _ now: [Int64]) -> [Int64] {
            (kept.filter { !changedNow.codes.contains($0) } + now).sorted()
        }
        return Keys(sharing: merged(before.sharing, changedNow.keys.sharing),
                    inClosedGroups: merged(before.inClosedGroups, changedNow.keys.inClosedGroups))
    }

    private func keys(_ db: Database, sql: String, nearOnly: Bool, exempt: Set<Int64>) throws -> Keys {
        try keys(db, sql: sql, nearOnly: nearOnly, exempt: exempt, collectingCodes: false).keys
    }

    /// Whether a station at the row's `lat` and `lon` (columns 3 and 4) is within the radius of
    /// an added station named `name`, measured as `SplitFinder.near` measures the pair.
    private func isNear(_ row: OpaquePointer, _ name: [UInt8]) -> Bool {
        guard sqlite3_column_type(row, 3) != SQLITE_NULL, sqlite3_column_type(row, 4) != SQLITE_NULL else { return false }
        let (latitude, longitude) = (sqlite3_column_double(row, 3), sqlite3_column_double(row, 4))
        return placesByName[name]?.contains {
            Geography.metres(latitude: latitude, longitude: longitude, toLatitude: $0.latitude, longitude: $0.longitude) <= radius
        } ?? false
    }

    private func keys(_ db: Database, sql: String, nearOnly: Bool, exempt: Set<Int64>,
                      collectingCodes: Bool) throws -> (keys: Keys, codes: Set<Int64>) {
        var found = Keys(sharing: [], inClosedGroups: []), codes = Set<Int64>()
        guard !isEmpty || collectingCodes else { return (found, codes) }
        let statement = try db.makeStatement(sql: sql)
        try StatementBinding.forEachRow(statement, db) { row in
            let code = sqlite3_column_int64(row, 0)
            if collectingCodes { codes.insert(code) }
            let group: Int64? = sqlite3_column_type(row, 1) == SQLITE_NULL ? nil : sqlite3_column_int64(row, 1)
            func inGroups(_ groups: Set<Int64>) -> Bool { groups.contains(code) || group.map(groups.contains) == true }
            if inGroups(closedGroups) { found.inClosedGroups.append(code) }
            if inGroups(addedGroups) {
                found.sharing.append(code)
            } else if !names.isEmpty, let text = sqlite3_column_text(row, 2) {
                let name = UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(row, 2)))
                guard nameHashes.contains(Self.hash(name)) else { return }
                let bytes = Array(name)
                if names.contains(bytes) && (!nearOnly || exempt.contains(code) || isNear(row, bytes)) { found.sharing.append(code) }
            }
        }
        return (found, codes)
    }

    /// FNV-1a: sorts out the names that cannot match without making an array of each.
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        bytes.reduce(emptyNameHash) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }

    /// `hash` of no bytes; a station without a name has it too.
    static let emptyNameHash: UInt64 = 0xcbf2_9ce4_8422_2325
}
