import StationSchema
import StationSupport

/// How a source publishes the master's tables: which of a file's columns it ignores (those the
/// master does not declare), how its values map into the master's domains, and how its station
/// pairs become connections. A column the master declares is always read, so a column a client
/// schema change declares later is read from then on without a new profile.
///
/// ekidata's own files need nothing (`ekidata`); TrainLCD/StationAPI's `data/` files need
/// `trainlcd` (docs/curating.md, "A second source").
public struct SourceProfile: Sendable, Equatable {
    /// The source's name, as `import --source` and `sources` give it.
    public let name: String
    /// Each table's rule, by the table's name; a table without one is read as ekidata writes it.
    public let tables: [String: TableRule]

    /// How one table's file is read.
    public struct TableRule: Sendable, Equatable {
        /// Columns of the source's that the master does not have, skipped.
        public let ignored: Set<String>
        /// Per column, a published value and the master's value it stands for.
        public let values: [String: [String: String]]
        /// For `connections`: the file lists station pairs, not a line's joins (`StationPairs`).
        public let pairs: StationPairs?
        /// Per column, how the source writes a value the master writes otherwise.
        public let normalized: [String: Normalization]

        /// A table's rule: nothing ignored, mapped or normalized, unless given.
        public init(ignored: Set<String> = [], values: [String: [String: String]] = [:], pairs: StationPairs? = nil,
                    normalized: [String: Normalization] = [:]) {
            self.ignored = ignored
            self.values = values
            self.pairs = pairs
            self.normalized = normalized
        }
    }

    /// A text the source writes with something the master's values do not have, taken off
    /// before the value is compared or filled, so that one value is not two.
    public enum Normalization: Sendable, Equatable {
        /// A leading `prefix` (a colour's `#`).
        case withoutLeading(String)
        /// The row's prefecture's name in front or not (an address: `北海道函館市…` is `函館市…`;
        /// ekidata writes both): compared without it on either side, stored as the source has it.
        case withoutPrefectureName
    }

    /// A connections file of pairs of stations without their line.
    public enum StationPairs: String, Sendable, Equatable {
        /// A pair whose two stations the same import puts on one line is a connection of that
        /// line; a pair across two lines is a transfer, and a pair naming a station the import
        /// lacks has no line: both are skipped and counted (`SourceRows.skipped`).
        case onOneLine = "on-one-line"
    }

    /// A source called `name` whose tables `tables` describes.
    public init(name: String, tables: [String: TableRule]) {
        self.name = name
        self.tables = tables
    }

    /// The rule for `table`; none: every column is the master's.
    public func rule(for table: MasterTable) -> TableRule { tables[table.name] ?? TableRule() }

    /// ekidata's files, as the primary importer reads them.
    public static let ekidata = SourceProfile(name: PrimarySource.name, tables: [:])

    /// TrainLCD/StationAPI's `data/` files (`1!companies.csv`, `2!lines.csv`, `3!stations.csv`,
    /// `8!connections.csv`): ekidata's codes and columns, plus names in other scripts, station
    /// numbers and line symbols the master does not have; `e_status` 3 (`throughRunning`), which
    /// its documentation does not list, is 0; its connections are pairs (`StationPairs.onOneLine`);
    /// its colours begin with `#` and its addresses with the prefecture, as ekidata's do not.
    public static let trainlcd = SourceProfile(name: "trainlcd", tables: [
        "companies": TableRule(ignored: ["company_name_en", "company_name_full_en"]),
        "lines": TableRule(ignored: Set(["line_name_r", "line_name_rn", "line_name_zh", "line_name_ko", "average_distance"]
            + (1...4).flatMap { ["line_symbol\($0)", "line_symbol\($0)_color", "line_symbol\($0)_shape"] }), values: ["e_status": throughRunning],
            normalized: ["line_color_c": .withoutLeading("#")]),
        "stations": TableRule(ignored: Set(["station_name_rn", "station_name_zh", "station_name_ko", "three_letter_code"]
            + (1...4).map { "station_number\($0)" }), values: ["e_status": throughRunning],
            normalized: ["address": .withoutPrefectureName]),
        "connections": TableRule(ignored: ["id", "distance"], pairs: .onOneLine),
    ])

    /// TrainLCD's `e_status` 3: a line that runs through on other lines' tracks (成田エクスプレス),
    /// or a station of a line where it does (山形新幹線 東京–福島), in service: 0.
    private static let throughRunning = ["3": "\(MasterTable.openStatus)"]

    /// The sources this StationAdmin knows by name.
    public static let known = [ekidata, trainlcd]

    /// The known source `name`; nil for a name this StationAdmin does not know.
    public static func named(_ name: String) -> SourceProfile? { known.first { $0.name == name } }
}
