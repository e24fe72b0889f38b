import GRDB
import StationSchema

/// What makes a station split (DUPLICATE) acceptable.
package enum SplitRules {
    /// Before the batch is written: the old station exists, old ≠ new, and the pair is
    /// not recorded twice. (The `split` operation also wants a fresh code and an open station;
    /// `record_split` links a station an import already added.)
    package static func check(_ splits: [(old: Int64, new: Int64)], _ db: Database) throws {
        var pairs = Set<[Int64]>()
        for split in splits {
            func refuse(_ reason: String) -> VersionError { .splitRefused(old: split.old, new: split.new, reason: reason) }
            if split.old == split.new { throw refuse("the old and new codes are the same (expected two stations)") }
            let oldExists = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM main.stations WHERE station_cd = ?)", arguments: [split.old]) ?? false
            if !oldExists { throw refuse("station \(split.old) does not exist (expected an existing station to split)") }
            if try UpdateLog.hasSplit(db, old: split.old, new: split.new) || !pairs.insert([split.old, split.new]).inserted {
                throw refuse("this split is already recorded")
            }
        }
        // A loop would copy records round and round: refuse any cycle among all splits ever.
        var edges: [Int64: [Int64]] = [:]
        for split in try UpdateLog.splits(db) { edges[split.old, default: []].append(split.new) }
        for split in splits { edges[split.old, default: []].append(split.new) }
        for split in splits where reaches(from: split.new, to: split.old, edges) {
            throw VersionError.splitRefused(old: split.old, new: split.new, reason: "it would close a loop of splits back to \(split.old)")
        }
    }

    /// After the batch is written, every new station exists.
    package static func checkNewStationsExist(_ splits: [(old: Int64, new: Int64)], _ db: Database) throws {
        for split in splits {
            let exists = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM main.stations WHERE station_cd = ?)", arguments: [split.new]) ?? false
            if !exists {
                throw VersionError.splitRefused(old: split.old, new: split.new, reason: "station \(split.new) is not added (expected its INSERT in the same change)")
            }
        }
    }

    private static func reaches(from start: Int64, to goal: Int64, _ edges: [Int64: [Int64]]) -> Bool {
        var stack = [start], seen = Set<Int64>()
        while let node = stack.popLast() {
            if node == goal { return true }
            if seen.insert(node).inserted { stack += edges[node] ?? [] }
        }
        return false
    }
}
