/// A table of the web service's own that holds users' records of stations: each split copies a
/// user's rows of the old station to the new one (`--user-table completions:user_id`).
///
/// Names are PostgreSQL's: a plain one (`completions`) is folded to lower case as the server
/// does; a quoted one (`"Completions":"userId"`) is taken as written, mixed case, non-ASCII or a
/// reserved word. The SQL names them through the server's own `quote_ident`.
public struct UserTable: Sendable, Equatable, CustomStringConvertible {
    /// The table's schema (`public` when the configuration names none).
    public var schema: String
    /// The table's name, as the catalog has it.
    public var name: String
    /// The column naming the user.
    public var userColumn: String
    /// The column naming the station.
    public var stationColumn: String

    /// The seeds' table: `completions` (user id, station code, date, memo, updated time).
    public static let completions = UserTable(table: "completions", userColumn: "user_id", stationColumn: "station_cd")

    /// A user table of `table` (`name` or `schema.name`, as the catalog has them), its users in
    /// `userColumn` and stations in `stationColumn`.
    public init(table: String, userColumn: String, stationColumn: String = "station_cd") {
        let parts = table.split(separator: ".", maxSplits: 1).map(String.init)
        self.init(schema: parts.count == 2 ? parts[0] : "public", name: parts.last ?? table, userColumn: userColumn, stationColumn: stationColumn)
    }

    /// A user table `schema.name`.
    public init(schema: String, name: String, userColumn: String, stationColumn: String) {
        self.schema = schema
        self.name = name
        self.userColumn = userColumn
        self.stationColumn = stationColumn
    }

    /// `TABLE:USER_COLUMN[:STATION_COLUMN]`, TABLE as `name` or `schema.name`; each name plain
    /// (lower case as the server folds it) or in double quotes (`""` for a quote inside).
    public init(parsing text: String) throws {
        var names: [[String]] = [[]]
        var current = "", quoted = false, wasQuoted = false
        var characters = Array(text)[...]
        func finish() throws {
            guard !current.isEmpty else { throw PostgresSyncError.badUserTable(text) }
            if !wasQuoted {
                guard PlainName.isPlain(current.lowercased()) else { throw PostgresSyncError.badUserTable(text) }
                current = current.lowercased()
            }
            names[names.count - 1].append(current)
            current = ""
            wasQuoted = false
        }
        while let character = characters.popFirst() {
            if quoted {
                if character == "\"" {
                    if characters.first == "\"" { characters.removeFirst(); current.append("\"") } else { quoted = false }
                } else {
                    current.append(character)
                }
            } else if character == "\"" && current.isEmpty && !wasQuoted {
                quoted = true
                wasQuoted = true
            } else if character == ":" || character == "." {
                try finish()
                if character == ":" { names.append([]) } else if names.count > 1 || names[0].count > 1 { throw PostgresSyncError.badUserTable(text) }
            } else if wasQuoted {
                throw PostgresSyncError.badUserTable(text)
            } else {
                current.append(character)
            }
        }
        guard !quoted else { throw PostgresSyncError.badUserTable(text) }
        try finish()
        guard (2...3).contains(names.count), names.dropFirst().allSatisfy({ $0.count == 1 }), let table = names.first, (1...2).contains(table.count),
              !names.joined().contains(where: { $0.contains("\0") || $0.utf8.count > 63 })
        else { throw PostgresSyncError.badUserTable(text) }
        self.init(schema: table.count == 2 ? table[0] : "public", name: table.last!, userColumn: names[1][0],
                  stationColumn: names.count == 3 ? names[2][0] : "station_cd")
    }

    /// The table as a person writes it: `name`, or `schema.name` outside `public`.
    public var table: String { schema == "public" ? name : "\(schema).\(name)" }

    public var description: String { "\(table):\(userColumn):\(stationColumn)" }
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
