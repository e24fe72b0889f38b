/// The description of one master table: its columns, key and how its rows close.
///
/// Every capability (CSV reading, diff, history, release, delta) reads the tables
/// through these descriptions, so a column is named in one place only.
/// The migration in `MasterSchema` is frozen SQL; `MasterSchemaTests` checks that the two agree.
public struct MasterTable: Sendable, Hashable {
    /// How a column's CSV text is read and compared.
    public enum ColumnKind: Sendable, Hashable {
        /// Codes, statuses and sort keys.
        case integer
        /// Longitude and latitude, equal within `MasterTable.coordinateTolerance`.
        case coordinate(range: ClosedRange<Double>)
        /// Other numbers.
        case real
        case text
        /// `YYYY-MM-DD`; `0000-00-00` means unknown (NULL).
        case date
    }

    /// The values an integer column may hold, and how an error message names them.
    ///
    /// Plain cases, not arrays of ranges: the CSV reader copies a column's rule for every field.
    public enum IntegerDomain: Sendable, Hashable {
        /// Codes: positive and within SQLite's and the apps' 32-bit integers.
        case code
        /// ekidata's `e_status`.
        case status
        /// A station's prefecture: JIS X 0401, 1 (Hokkaido) to 47 (Okinawa).
        case prefecture
        /// The prefectures table also holds ekidata's catch-all row `99,その他`.
        case prefectureRow
        /// A station's map weight (`MapWeight`).
        case weight

        /// Whether `value` is in the domain.
        public func contains(_ value: Int64) -> Bool {
            switch self {
            case .code: return (1...Int64(Int32.max)).contains(value)
            case .status: return (0...2).contains(value)
            case .prefecture: return (1...47).contains(value)
            case .prefectureRow: return (1...47).contains(value) || value == 99
            case .weight: return MapWeight.contains(value)
            }
        }

        /// The domain in words, for an error message (`a prefecture code from 1 to 47`).
        public var expectation: String {
            switch self {
            case .code: return "a positive code up to \(Int32.max)"
            case .status: return "\(openStatus) (open), \(notYetOpenStatus) (not yet open) or \(closedStatus) (closed)"
            case .prefecture: return "a prefecture code from 1 to 47"
            case .prefectureRow: return "a prefecture code from 1 to 47, or 99 (その他)"
            case .weight: return MapWeight.expectation
            }
        }
    }

    /// The longest text a text column takes, in UTF-8 bytes (a kana or kanji takes 3). Generous
    /// for real data (the longest names in the 2021 ekidata are 63 bytes, the longest address
    /// 70), but a 50 MB name pasted by mistake never reaches a phone. Every write path refuses
    /// a longer value: imports with `FILE:LINE`, curated changes and plans with the field named.
    public enum TextLimit: Int, Sendable, Hashable {
        /// Postal codes and colour codes.
        case code = 32
        /// Names, readings and colour names: about 100 Japanese characters.
        case name = 300
        /// Addresses: about 200 Japanese characters.
        case address = 600
        /// Web addresses.
        case url = 2_048
    }

    /// A column of a master table, declared once: the master, its history table, the client table, the CSV reader and the content hash read it.
    public struct Column: Sendable, Hashable {
        /// The column's name, as in ekidata's header.
        public let name: String
        /// How its values are read, stored and compared.
        public let kind: ColumnKind
        /// For text columns: the longest value, in UTF-8 bytes.
        public let textLimit: TextLimit?
        /// For integer columns with a domain: values outside it are bad input.
        public let domain: IntegerDomain?
        /// The value of a curator-only column in a row that does not give it (`weight`).
        public let defaultValue: Int?
        /// An empty field is an error.
        public let isRequired: Bool
        /// `false` for curator-only columns (`weight`) that no CSV carries: an import keeps them.
        public let isInCSV: Bool
        /// The client schema version since which phones have the column (`ClientSchemaChange`).
        public let since: Int

        /// The declared type of the column in SQLite.
        public var sqlType: String {
            switch kind {
            case .integer: return "INTEGER"
            case .coordinate, .real: return "REAL"
            case .text, .date: return "TEXT"
            }
        }

        /// A column; `since` is the client schema version from which phones have it (1: the first).
        public init(_ name: String, _ kind: ColumnKind, required: Bool = false, inCSV: Bool = true, domain: IntegerDomain? = nil, defaultValue: Int? = nil,
                    limit: TextLimit? = nil, since: Int = 1) {
            precondition((kind == .text) == (limit != nil), "\(name): a text column, and only a text column, has a TextLimit")
            self.name = name
            self.kind = kind
            self.textLimit = limit
            self.domain = domain
            self.defaultValue = defaultValue
            self.isRequired = required
            self.isInCSV = inCSV
            self.since = since
        }
    }

    /// The table's name in the master and on phones.
    public let name: String
    /// Every column: those of the first client schema, then those its `ClientSchemaChange`s
    /// added, in the order they came. The static tables (`MasterTable.stations`) are client
    /// schema 1's, and name a table; a `DeclaredSchema` gives its columns under the changes.
    public let columns: [Column]
    /// The primary key's columns, in order.
    public let keyColumns: [String]
    /// `true` for companies, lines and stations: a missing row is closed (`e_status = 2`),
    /// never removed, because user records point at its code.
    public let closesByStatus: Bool
    /// Older ekidata headers that mean a current column (`add` → `address`).
    public let headerAliases: [String: String]

    /// ekidata's `e_status` values; a closed row stays, with `closedStatus`.
    public static let openStatus = 0
    /// `e_status` of a row that is announced and not yet open.
    public static let notYetOpenStatus = 1
    /// `e_status` of a closed row: closures keep the row, and its code.
    public static let closedStatus = 2
    /// Two coordinates closer than this (in degrees) are the same: snapshots rewrite
    /// `34.697960` as `34.69796` or round 15 decimals to 6.
    public static let coordinateTolerance = 1e-6

    /// Whether two stored coordinates are one place under `coordinateTolerance`: the one rule the
    /// import's diff, curated changes, the change report and the review page apply.
    public static func isSameCoordinate(_ a: Double, _ b: Double) -> Bool { abs(a - b) < coordinateTolerance }

    /// The columns phones have at client schema `version`.
    public func columns(clientSchema version: Int) -> [Column] { columns.filter { $0.since <= version } }

    package init(name: String, columns: [Column], keyColumns: [String], closesByStatus: Bool, headerAliases: [String: String]) {
        self.name = name
        self.columns = columns
        self.keyColumns = keyColumns
        self.closesByStatus = closesByStatus
        self.headerAliases = headerAliases
    }

    /// This table with `added` columns after its own.
    package func adding(_ added: [Column]) -> MasterTable {
        added.isEmpty ? self : MasterTable(name: name, columns: columns + added, keyColumns: keyColumns,
                                           closesByStatus: closesByStatus, headerAliases: headerAliases)
    }

    /// A table is its name: the same table under two declared schemas (one with a column
    /// added) is one table, as in the master, whose migration adds the column in place.
    public static func == (a: MasterTable, b: MasterTable) -> Bool { a.name == b.name }
    /// By the name alone, as `==` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// The columns that are not part of the key.
    public var nonKeyColumns: [Column] { columns.filter { !keyColumns.contains($0.name) } }
    /// The columns' names, in order.
    public var columnNames: [String] { columns.map(\.name) }
    /// The table that keeps every superseded state (`stations_history`).
    public var historyTable: String { name + "_history" }
    /// What upstream's last imported file said of each row (`stations_upstream`): the base of
    /// the next import's three-way merge.
    public var upstreamTable: String { name + "_upstream" }

    /// The column called `name`, if the table has one.
    public func column(named name: String) -> Column? { columns.first { $0.name == name } }

    /// SQL that renders a row's key as the `updates.key_id` text: `11302/1130201/1130202`.
    /// One `printf`, the same text as the codes cast and joined with `||`, without the text
    /// in between.
    public func keyText(alias: String? = nil) -> String {
        let prefix = alias.map { $0 + "." } ?? ""
        if keyColumns.count == 1 { return "CAST(\(prefix)\(keyColumns[0]) AS TEXT)" }
        let format = Array(repeating: "%s", count: keyColumns.count).joined(separator: "/")
        return "printf('\(format)', \(keyColumns.map { prefix + $0 }.joined(separator: ", ")))"
    }

    /// SQL that joins two aliases of this table on the key: `a.station_cd = b.station_cd`.
    public func keyJoin(_ left: String, _ right: String) -> String {
        keyColumns.map { "\(left).\($0) = \(right).\($0)" }.joined(separator: " AND ")
    }

    /// The key columns for an `ORDER BY`: the order of exports, deltas and reports.
    public var keyOrder: String { keyColumns.joined(separator: ", ") }
}

extension MasterTable {
    package static let longitude = ColumnKind.coordinate(range: -180...180)
    package static let latitude = ColumnKind.coordinate(range: -90...90)

    /// ekidata's `pref.csv`: the 47 prefectures and `99 その他`.
    public static let prefectures = MasterTable(
        name: "prefectures",
        columns: [
            Column("pref_cd", .integer, required: true, domain: .prefectureRow),
            Column("pref_name", .text, required: true, limit: .name),
        ],
        keyColumns: ["pref_cd"], closesByStatus: false, headerAliases: [:])

    /// ekidata's `company.csv`: the operators.
    public static let companies = MasterTable(
        name: "companies",
        columns: [
            Column("company_cd", .integer, required: true, domain: .code),
            Column("rr_cd", .integer, domain: .code),
            Column("company_name", .text, required: true, limit: .name),
            Column("company_name_k", .text, limit: .name),
            Column("company_name_h", .text, limit: .name),
            Column("company_name_r", .text, limit: .name),
            Column("company_url", .text, limit: .url),
            Column("company_type", .integer),
            Column("e_status", .integer, required: true, domain: .status),
            Column("e_sort", .integer),
        ],
        keyColumns: ["company_cd"], closesByStatus: true, headerAliases: [:])

    /// ekidata's `line.csv`: each line of an operator.
    public static let lines = MasterTable(
        name: "lines",
        columns: [
            Column("line_cd", .integer, required: true, domain: .code),
            Column("company_cd", .integer, required: true, domain: .code),
            Column("line_name", .text, required: true, limit: .name),
            Column("line_name_k", .text, limit: .name),
            Column("line_name_h", .text, limit: .name),
            Column("line_color_c", .text, limit: .code),
            Column("line_color_t", .text, limit: .name),
            Column("line_type", .integer),
            Column("lon", longitude),
            Column("lat", latitude),
            Column("zoom", .integer),
            Column("e_status", .integer, required: true, domain: .status),
            Column("e_sort", .integer),
        ],
        keyColumns: ["line_cd"], closesByStatus: true, headerAliases: [:])

    /// ekidata's `station.csv`, plus the map weight the curators add.
    public static let stations = MasterTable(
        name: "stations",
        columns: [
            Column("station_cd", .integer, required: true, domain: .code),
            Column("station_g_cd", .integer, domain: .code),
            Column("station_name", .text, required: true, limit: .name),
            Column("station_name_k", .text, limit: .name),
            Column("station_name_r", .text, limit: .name),
            Column("line_cd", .integer, required: true, domain: .code),
            Column("pref_cd", .integer, domain: .prefecture),
            Column("post", .text, limit: .code),
            Column("address", .text, limit: .address),
            Column("lon", longitude),
            Column("lat", latitude),
            Column("open_ymd", .date),
            Column("close_ymd", .date),
            Column("e_status", .integer, required: true, domain: .status),
            Column("e_sort", .integer),
            Column("weight", .integer, inCSV: false, domain: .weight, defaultValue: MapWeight.unsampled),
        ],
        keyColumns: ["station_cd"], closesByStatus: true, headerAliases: ["add": "address"])

    /// ekidata's `join.csv`: the stations next to each other on a line.
    public static let connections = MasterTable(
        name: "connections",
        columns: [
            Column("line_cd", .integer, required: true, domain: .code),
            Column("station_cd1", .integer, required: true, domain: .code),
            Column("station_cd2", .integer, required: true, domain: .code),
        ],
        keyColumns: ["line_cd", "station_cd1", "station_cd2"], closesByStatus: false, headerAliases: [:])

    /// In the order their rows may reference each other: a delta and a commit write them so.
    public static let all: [MasterTable] = [prefectures, companies, lines, stations, connections]

    /// The table called `name`, if there is one.
    public static func named(_ name: String) -> MasterTable? { all.first { $0.name == name } }

    /// A column whose value must name a row of another table.
    package struct Reference {
        package let child: MasterTable
        package let column: String
        package let parent: MasterTable
    }

    /// The references every imported or curated row must keep. A connection may name a
    /// station the free data leaves out (Shinkansen), so connections are only warned about.
    package static let references = [
        Reference(child: .stations, column: "line_cd", parent: .lines),
        Reference(child: .lines, column: "company_cd", parent: .companies),
    ]
}
