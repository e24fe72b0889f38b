/// What `sync-postgres` did (or, with `--dry-run`, would do): `--json` prints it
/// (docs/schemas/sync-postgres.schema.json).
public struct PostgresSyncReport: Codable, Sendable, Equatable {
    /// Rows of one master table changed.
    public struct TableCounts: Codable, Sendable, Equatable {
        /// Rows the release added.
        public var inserted = 0
        /// Rows whose values the release changed (a closure is a change of `e_status`).
        public var updated = 0
        /// Connections the release no longer has (no other row is ever removed: closed rows stay).
        public var removed = 0
    }

    /// One split applied to the user tables.
    public struct AppliedSplit: Codable, Sendable, Equatable {
        /// The version that recorded it.
        public var version: Int
        /// The station whose records are copied.
        public var old: Int64
        /// The station they are copied to.
        public var new: Int64
        /// User table → rows copied to the new station.
        public var copied: [String: Int]
        /// User table → rows not copied because a record the app made meanwhile stood for the
        /// copy (left as the app made it).
        public var skipped: [String: Int]
    }

    /// The `--baseline` a first run was given, and what it was checked against.
    public struct Baseline: Codable, Sendable, Equatable {
        /// The version the web database's master data was said to be at.
        public var version: Int
        /// What agreed with it: the master tables' content hash, the users' records, or nothing
        /// there was to weigh (no master tables, no record at any split's old station).
        public var evidence: BaselineEvidence

        /// The baseline `version`, found to agree by `evidence`.
        public init(version: Int, evidence: BaselineEvidence) {
            self.version = version
            self.evidence = evidence
        }
    }

    /// What the sync downloaded to reach the release.
    public struct Fetched: Codable, Sendable, Equatable {
        /// How the release's client database was made.
        public enum Kind: String, Codable, Sendable {
            /// The release's delta from the server's version, run on the database the last sync kept.
            case delta
            /// The whole database, downloaded.
            case full
        }
        /// The delta, or the whole database.
        public var kind: Kind
        /// The version the delta starts from; nil for a full download.
        public var from: Int?
        /// Bytes of the gzip file downloaded.
        public var bytes: Int

        private enum CodingKeys: String, CodingKey { case kind, from, bytes }

        /// Every key, `from` as null for a full download (docs/json.md: keys are always present).
        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(kind, forKey: .kind)
            try container.encode(from, forKey: .from)
            try container.encode(bytes, forKey: .bytes)
        }
    }

    /// The database, without its password.
    public var database: String
    /// The schema of the master tables.
    public var schema: String
    /// The version the database was at (0: none yet).
    public var from: Int
    /// The release's version.
    public var to: Int
    /// Whether the database was written (false for a dry run, or when it was at the release already).
    public var committed: Bool
    /// Whether the database was at the release already: nothing to do.
    public var upToDate: Bool
    /// Master table → rows changed; empty when up to date.
    public var tables: [String: TableCounts]
    /// Each split since the database's version, in the order recorded.
    public var splits: [AppliedSplit]
    /// Users whose records a split copied, over every user table.
    public var usersAffected: Int
    /// What was downloaded; nil when the database was at the release already.
    public var fetched: Fetched?
    /// The checked `--baseline` of a first run; nil otherwise.
    public var baseline: Baseline?

    enum CodingKeys: String, CodingKey {
        case database, schema, from, to, committed, upToDate = "up_to_date", tables, splits, usersAffected = "users_affected", fetched, baseline
    }

    /// Every key, `fetched` as null when up to date (docs/json.md: keys are always present).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(database, forKey: .database)
        try container.encode(schema, forKey: .schema)
        try container.encode(from, forKey: .from)
        try container.encode(to, forKey: .to)
        try container.encode(committed, forKey: .committed)
        try container.encode(upToDate, forKey: .upToDate)
        try container.encode(tables, forKey: .tables)
        try container.encode(splits, forKey: .splits)
        try container.encode(usersAffected, forKey: .usersAffected)
        try container.encode(fetched, forKey: .fetched)
        try container.encode(baseline, forKey: .baseline)
    }
}

/// The steps of a sync, in order: where the crash tests stop it (`onStep`).
public enum PostgresSyncStep: String, Sendable, CaseIterable {
    case connected, stateRead, verified, downloaded, locked, tablesReady, tablesCopied, splitsApplied, operatorSQLRun, stateWritten, committed
}
