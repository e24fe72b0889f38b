/// What a batch of changes does: the data version it makes, counts per table and kind,
/// warnings, and the changes in words (`1122903 佐貫 → 龍ケ崎市`).
///
/// Printed by `diff`, `import` and the curated commands; `--json` encodes it as
/// `{"version": 2, "committed": true, "counts": {"stations": {"INSERT": 17, …}}, "warnings": […], "changes": […]}`.
public struct ChangeReport: Codable, Sendable, Equatable {
    /// The version the changes make (or would make, when not committed).
    public var version: Int
    public var committed: Bool
    /// Table name → kind (`INSERT`, `UPDATE`, `DELETE`, `RESTORE`, `DUPLICATE`) → rows.
    public var counts: [String: [String: Int]]
    public var warnings: [String]
    /// The first changes, in table order then key order.
    public var changes: [DescribedChange]
    /// All changes, of which `changes` may show only the first.
    public var totalChanges: Int
    /// Likely splits and handovers among the stations this batch closes and adds.
    public var suggestions: [SplitSuggestion] = []
    /// What `check` finds in this version that it did not find in the one before.
    public var findings: [CheckFinding] = []

    public func count(_ table: String, _ kind: Update.Kind) -> Int { counts[table]?[kind.rawValue] ?? 0 }
}

/// One changed row in words.
public struct DescribedChange: Codable, Sendable, Equatable {
    public var table: String
    public var key: String
    public var kind: Update.Kind
    /// The row's name (`station_name`, `line_name`, …) after the change.
    public var name: String?
    /// For UPDATE, DELETE and RESTORE: the columns that changed, old → new;
    /// for INSERT: the new row's non-NULL columns.
    public var fields: [FieldChange]

    /// `stations 1122903 佐貫 UPDATE: station_name 佐貫 → 龍ケ崎市`
    public var summary: String {
        var text = "\(kind.rawValue) \(table) \(key)"
        if let name { text += " \(name)" }
        if kind == .insert && !fields.isEmpty {
            text += ": " + fields.map { "\($0.column)=\($0.new ?? "NULL")" }.joined(separator: ", ")
        } else if !fields.isEmpty {
            text += ": " + fields.map { "\($0.column) \($0.old ?? "NULL") → \($0.new ?? "NULL")" }.joined(separator: ", ")
        }
        return text
    }
}

public struct FieldChange: Codable, Sendable, Equatable {
    public var column: String
    public var old: String?
    public var new: String?

    /// Every key; NULL as null.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(column, forKey: .column)
        try container.encode(old, forKey: .old)
        try container.encode(new, forKey: .new)
    }
}
