/// The phone's table of a user's station records (`completions`, docs/clients.md) and the one
/// statement a split runs on it, whichever path brings the split: a delta's `DUPLICATE`, the
/// carry-over script of a file swap, or the phone's in-place install. The three paths differ only
/// in the schemas they name and where the codes come from, so a change to what a split copies is
/// made here once.
public enum UserRecords {
    /// The table's name in the client schema.
    public static let table = "completions"
    /// Its key: the station the record is for.
    public static let stationColumn = "station_cd"
    /// What a split copies to the new station beside its code. A column an app added is not
    /// among them: the copy leaves it NULL (docs/clients.md, "Splits").
    public static let recordColumns = ["date", "memo", "updated_at"]
    /// Every column the client schema declares, in its order.
    public static let columns = [stationColumn] + recordColumns

    /// Where a split's two station codes come from in its statement.
    package enum Codes {
        /// Written into the SQL (a delta or a script: integers, the log's own).
        case literal(old: Int64, new: Int64)
        /// Bound as the statement's two parameters, new then old (the phone's install).
        case bound
    }

    /// `INSERT OR IGNORE` of the old station's record under the new code, keeping a record the
    /// user already has there: into `target`'s table from `source`'s (a schema name, or nil for
    /// the unqualified table), with `condition` (SQL) further limiting the rows read.
    package static func splitCopy(_ codes: Codes, into target: String? = nil, from source: String? = nil, where condition: String? = nil) -> String {
        let (old, new) = switch codes {
        case .literal(let old, let new): (String(old), String(new))
        case .bound: ("?", "?")
        }
        let rest = recordColumns.joined(separator: ", ")
        return "INSERT OR IGNORE INTO \(qualified(target)) (\(columns.joined(separator: ", "))) SELECT \(new), \(rest) FROM \(qualified(source))"
            + " WHERE \(stationColumn) = \(old)" + (condition.map { " AND " + $0 } ?? "")
    }

    /// Every record of `source`'s table into `target`'s, keeping those `target` already has.
    package static func copyAll(into target: String, from source: String) -> String {
        let list = columns.joined(separator: ", ")
        return "INSERT OR IGNORE INTO \(qualified(target)) (\(list)) SELECT \(list) FROM \(qualified(source))"
    }

    private static func qualified(_ schema: String?) -> String {
        (schema.map { $0 + "." } ?? "") + table
    }
}
