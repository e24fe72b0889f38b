import GRDB
import StationCheck
import StationSchema

/// What a batch of changes does: the data version it makes, counts per table and kind,
/// warnings, and the changes in words (`1122903 佐貫 → 龍ケ崎市`).
///
/// Printed by `diff`, `import` and the curated commands; `--json` encodes it as
/// `{"version": 2, "committed": true, "counts": {"stations": {"INSERT": 17, …}}, "warnings": […], "changes": […]}`.
public struct ChangeReport: Codable, Sendable, Equatable {
    /// The version the changes make (or would make, when not committed).
    public var version: Int
    /// Whether the version was written (not a dry run, a diff, or a batch that changed nothing).
    public var committed: Bool
    /// Table name → kind (`INSERT`, `UPDATE`, `DELETE`, `RESTORE`, `DUPLICATE`) → rows.
    public var counts: [String: [String: Int]]
    /// What the producer wants a curator to read (connections to missing stations, …).
    public var warnings: [String]
    /// The first changes, in table order then key order.
    public var changes: [DescribedChange]
    /// All changes, of which `changes` may show only the first.
    public var totalChanges: Int
    /// Likely splits and handovers among the stations this batch closes and adds.
    public var suggestions: [SplitSuggestion] = []
    /// What `check` finds in this version that it did not find in the one before: the first
    /// `IntroducedFindings.shownPerRule` of each rule (`findingCounts` says how many there are).
    public var findings: [CheckFinding] = []
    /// Columns upstream and curators both changed (an import's three-way merge), decided or not.
    public var conflicts: [MergeConflict] = []
    /// Provisional rows that match upstream's rows for the same event, adopted or not.
    public var adoptions: [Adoption] = []
    /// What the merge kept or decided beside the changes: curated values kept, conflicts
    /// decided, provisional rows adopted (`merge_notes`).
    public var mergeNotes: [MergeNote] = []
    /// Rule → how many findings of it this version introduces, every rule listed (0 for none).
    public var findingCounts: [String: Int] = Dictionary(uniqueKeysWithValues: CheckRule.allCases.map { ($0.rawValue, 0) })

    /// The findings this version introduces: their counts and the first of each rule.
    package mutating func setFindings(_ introduced: IntroducedFindings) {
        findings = introduced.first
        for rule in CheckRule.allCases { findingCounts[rule.rawValue] = introduced.counts[rule] ?? 0 }
    }

    /// How many findings this version introduces.
    public var totalFindings: Int { findingCounts.values.reduce(0, +) }

    /// Rows of `table` changed by `kind`; 0 for none.
    public func count(_ table: String, _ kind: Update.Kind) -> Int { counts[table]?[kind.rawValue] ?? 0 }

    package enum CodingKeys: String, CodingKey {
        case version, committed, counts, warnings, changes, totalChanges, suggestions, findings, findingCounts
        // After `changes` in the sorted keys, which the streamed JSON relies on.
        case conflicts, adoptions = "provisionalAdoptions", mergeNotes
    }

    /// The JSON contract (docs/json.md): every table and kind in `counts`, 0 for none.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(committed, forKey: .committed)
        var full: [String: [String: Int]] = [:]
        for table in MasterTable.all {
            for kind in Update.Kind.allCases { full[table.name, default: [:]][kind.countKey] = count(table.name, kind) }
        }
        try container.encode(full, forKey: .counts)
        try container.encode(warnings, forKey: .warnings)
        try container.encode(changes, forKey: .changes)
        try container.encode(totalChanges, forKey: .totalChanges)
        try container.encode(suggestions, forKey: .suggestions)
        try container.encode(findings, forKey: .findings)
        try container.encode(findingCounts, forKey: .findingCounts)
        try container.encode(conflicts, forKey: .conflicts)
        try container.encode(adoptions, forKey: .adoptions)
        try container.encode(mergeNotes, forKey: .mergeNotes)
    }
}
