import GRDB
import StationSchema

/// Where a version's changes came from: the source whose import made it and that source's
/// snapshot, or nil for a curated version (`edit`, a plan, a revert). A fill by a second source
/// is its own version (DOMAIN.md, "More than one upstream"), so a version has one source at most.
public struct VersionSource: Codable, Sendable, Equatable {
    /// The source's name: `ekidata` for the primary, or the name `import --source` gave.
    public let name: String
    /// The snapshot's date, `YYYY-MM-DD`; nil when neither the files' names nor the curator gave one.
    public let snapshotDate: String?

    private enum CodingKeys: String, CodingKey { case name, snapshotDate = "snapshot_date" }

    /// `{"name": …, "snapshot_date": … or null}`: a date nobody gave is printed as null, not dropped.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(snapshotDate, forKey: .snapshotDate)
    }

    /// `trainlcd 2025-12-13`.
    public var description: String { name + (snapshotDate.map { " " + $0 } ?? "") }

    /// The source of `version`, read from what the master recorded of each import; with
    /// `orUnchanged`, also an import that changed nothing and recorded the master's version then
    /// (a merge note's: its decisions are kept though no version was made).
    package static func of(version: Int, orUnchanged: Bool = false, _ db: Database) throws -> VersionSource? {
        if try db.tableExists("source_imports"), let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT source, MAX(snapshot_date) FROM source_imports WHERE version = ? GROUP BY source ORDER BY MIN(id) LIMIT 1
            """), arguments: [version]) {
            return VersionSource(name: row[0], snapshotDate: row[1])
        }
        guard try db.tableExists("upstream_imports"), try Bool.fetchOne(db.cachedStatement(sql: """
            SELECT EXISTS (SELECT 1 FROM upstream_imports WHERE version = ? AND (made_version OR ?))
            """), arguments: [version, orUnchanged]) == true else { return nil }
        let date = try String.fetchOne(db.cachedStatement(sql: """
            SELECT MAX(snapshot_date) FROM upstream_imports WHERE version = ? AND (made_version OR ?)
            """), arguments: [version, orUnchanged])
        return VersionSource(name: PrimarySource.name, snapshotDate: date)
    }

    /// `of(version:)` remembered per version: a log reads each version's source once.
    package final class Cache {
        private var known: [Int: VersionSource?] = [:]
        package init() {}
        package func source(of version: Int, _ db: Database) throws -> VersionSource? {
            if let found = known[version] { return found }
            let found = try VersionSource.of(version: version, db)
            known[version] = found
            return found
        }
    }
}
