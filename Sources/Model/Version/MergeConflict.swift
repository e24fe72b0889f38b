import Foundation
import GRDB
import StationSchema

/// A column upstream and curators both changed, to different values, since upstream's last file
/// (or, for `revert`, a column a later version changed after the one reverted). A person decides
/// it: `MergeDecisions`.
///
/// In words: `stations 1110602 close_ymd: base NULL; ours 2023-04-01 (v4, "memo"); theirs 2025-03-15`.
public struct MergeConflict: Codable, Sendable, Equatable, Hashable {
    /// The table the row belongs to.
    public var table: String
    /// The row's key as in `updates.key_id` (`1110602`, `11302/1130201/1130202`).
    public var key: String
    /// The column decided.
    public var column: String
    /// What upstream's last file said (for a revert: the value before the reverted version).
    public var base: MergeValue
    /// The master's value now.
    public var ours: MergeValue
    /// What the new file says (for a revert: the value the revert would put back).
    public var theirs: MergeValue
    /// The newest version that changed the row in the master, and its memo.
    public var oursVersion: Int?
    /// That version's memo.
    public var oursMemo: String?
    /// The side decided, nil while undecided.
    public var decision: MergeSide?

    /// How many conflicts a refusal lists; `diff` and `--json` list them all.
    public static let shownInRefusal = 20

    /// A conflict, undecided unless `decision` says otherwise.
    public init(table: String, key: String, column: String, base: MergeValue, ours: MergeValue, theirs: MergeValue,
                oursVersion: Int? = nil, oursMemo: String? = nil, decision: MergeSide? = nil) {
        self.table = table
        self.key = key
        self.column = column
        self.base = base
        self.ours = ours
        self.theirs = theirs
        self.oursVersion = oursVersion
        self.oursMemo = oursMemo
        self.decision = decision
    }

    /// `take`, as the resolution file says it: one word for a decision in every file and report.
    package enum CodingKeys: String, CodingKey {
        case table, key, column, base, ours, theirs, decision = "take"
        case oursVersion = "ours_version", oursMemo = "ours_memo"
    }

    /// Every key, null for no value (docs/json.md).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(table, forKey: .table)
        try container.encode(key, forKey: .key)
        try container.encode(column, forKey: .column)
        try container.encode(base, forKey: .base)
        try container.encode(ours, forKey: .ours)
        try container.encode(theirs, forKey: .theirs)
        try container.encode(oursVersion, forKey: .oursVersion)
        try container.encode(oursMemo, forKey: .oursMemo)
        try container.encode(decision, forKey: .decision)
    }

    /// What the decision is about: table, key and column.
    public var id: ConflictID { ConflictID(table: table, key: key, column: column) }

    /// The conflict in one line, as `diff` and `import` list it.
    public var description: String {
        var origin = ""
        if let oursVersion {
            origin = " (v\(oursVersion)" + (oursMemo.map { ", \"\($0)\"" } ?? "") + ")"
        }
        return "\(table) \(key) \(column): base \(base); ours \(ours)\(origin); theirs \(theirs)"
    }
}

/// Which conflict a decision is about.
public struct ConflictID: Hashable, Sendable {
    /// The table the row belongs to.
    public var table: String
    /// The row's key as in `updates.key_id`.
    public var key: String
    /// The column decided.
    public var column: String
}

/// Rows a curator or a plan added provisionally that upstream now has under its own code: the
/// same real event (DOMAIN.md, "Provisional rows"). Adopting the pair closes the provisional row
/// and, for stations, records a DUPLICATE provisional → upstream, so records phones copied onto
/// the provisional station follow to upstream's.
public struct Adoption: Codable, Sendable, Equatable, Hashable {
    /// The table the row belongs to.
    public var table: String
    /// The provisional row's code.
    public var provisional: Int64
    /// The provisional row's name.
    public var provisionalName: String
    /// Upstream's code for the same row.
    public var upstream: Int64
    /// Upstream's name for it.
    public var upstreamName: String
    /// The version that added the provisional row (the event), and its memo.
    public var version: Int?
    /// The memo of the version that added the provisional row.
    public var memo: String?
    /// Why the two look like one: the shared name, the distance, the stations they share.
    public var reason: String
    /// `true` adopted, `false` both rows kept, nil undecided.
    public var adopted: Bool?

    /// `take` (`"adopt"`, `"keep"` or null), as the resolution file says it.
    package enum CodingKeys: String, CodingKey {
        case table, provisional, upstream, version, memo, reason, adopted = "take"
        case provisionalName = "provisional_name", upstreamName = "upstream_name"
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(table, forKey: .table)
        try container.encode(provisional, forKey: .provisional)
        try container.encode(provisionalName, forKey: .provisionalName)
        try container.encode(upstream, forKey: .upstream)
        try container.encode(upstreamName, forKey: .upstreamName)
        try container.encode(version, forKey: .version)
        try container.encode(memo, forKey: .memo)
        try container.encode(reason, forKey: .reason)
        try container.encode(adopted.map { $0 ? "adopt" : "keep" }, forKey: .adopted)
    }

    /// What the decision is about.
    public var id: AdoptionID { AdoptionID(table: table, provisional: provisional, upstream: upstream) }

    /// `stations 9944001 敦賀 → 9942801 敦賀`.
    public var description: String {
        "\(table) \(provisional) \(provisionalName) → \(upstream) \(upstreamName)"
    }
}

/// Which pair an adoption decision is about.
public struct AdoptionID: Hashable, Sendable {
    /// The table the row belongs to.
    public var table: String
    /// The provisional row's code.
    public var provisional: Int64
    /// Upstream's code for the same row.
    public var upstream: Int64
}

extension Adoption {
    /// Reads what `encode(to:)` writes.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        table = try container.decode(String.self, forKey: .table)
        provisional = try container.decode(Int64.self, forKey: .provisional)
        provisionalName = try container.decode(String.self, forKey: .provisionalName)
        upstream = try container.decode(Int64.self, forKey: .upstream)
        upstreamName = try container.decode(String.self, forKey: .upstreamName)
        version = try container.decodeIfPresent(Int.self, forKey: .version)
        memo = try container.decodeIfPresent(String.self, forKey: .memo)
        reason = try container.decode(String.self, forKey: .reason)
        adopted = try container.decodeIfPresent(String.self, forKey: .adopted).map { $0 == "adopt" }
    }
}
