/// A table of the web service's own that holds users' records of stations: each split copies a
/// user's rows of the old station to the new one (`--user-table completions:user_id`).
public struct UserTable: Sendable, Equatable, CustomStringConvertible {
    /// The table, in the search path or as `schema.table`.
    public var table: String
    /// The column naming the user.
    public var userColumn: String
    /// The column naming the station.
    public var stationColumn: String

    /// The seeds' table: `completions` (user id, station code, date, memo, updated time).
    public static let completions = UserTable(table: "completions", userColumn: "user_id", stationColumn: "station_cd")

    /// A user table of `table`, its users in `userColumn` and stations in `stationColumn`.
    public init(table: String, userColumn: String, stationColumn: String = "station_cd") {
        self.table = table
        self.userColumn = userColumn
        self.stationColumn = stationColumn
    }

    /// `TABLE:USER_COLUMN[:STATION_COLUMN]`, each a plain name.
    public init(parsing text: String) throws {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard (2...3).contains(parts.count), !parts.contains(where: \.isEmpty) else { throw PostgresSyncError.badUserTable(text) }
        self.init(table: parts[0], userColumn: parts[1], stationColumn: parts.count == 3 ? parts[2] : "station_cd")
        try PlainName.check(table, role: "user table", allowingSchema: true)
        try PlainName.check(userColumn, role: "user column")
        try PlainName.check(stationColumn, role: "station column")
    }

    public var description: String { "\(table):\(userColumn):\(stationColumn)" }

    /// The table's schema and name, `public` when it names none.
    var schemaAndName: (schema: String, name: String) {
        let parts = table.split(separator: ".", maxSplits: 1).map(String.init)
        return parts.count == 2 ? (parts[0], parts[1]) : ("public", parts[0])
    }
}

/// Names written into SQL as they are: only plain lower-case ones, so that no quoting is needed
/// and none can carry SQL.
enum PlainName {
    static func isPlain(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 63 else { return false }
        return (first == "_" || ("a"..."z").contains(first))
            && name.unicodeScalars.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) }
    }

    static func check(_ name: String, role: String, allowingSchema: Bool = false) throws {
        let parts = allowingSchema ? name.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).map(String.init) : [name]
        guard parts.allSatisfy(isPlain) else { throw PostgresSyncError.badIdentifier(name, role: role) }
    }
}
