import Foundation
import GRDB
import StationSchema
import StationSupport

/// A source's files read as the master's rows (`SourceProfile`): for each table it gives, the
/// columns it gives and every row, checked field by field as an import checks them (`FieldDecoder`),
/// so that a bad value is refused naming the source's own file, line and column.
package struct SourceRows {
    /// One table as the source gives it.
    package struct Table {
        package let table: MasterTable
        /// The file as the curator named it.
        package let file: String
        /// The master's columns the file gives, in the master's order: the key first among them
        /// when the table's key leads it (it does in every table).
        package let columns: [MasterTable.Column]
        /// Each row's values for `columns`, in file order.
        package var rows: [[DatabaseValue]]
        /// Each row's line in the file.
        package var lines: [Int]

        /// The values `rule` writes without a leading text, as the master writes them.
        mutating func normalize(_ rule: SourceProfile.TableRule) {
            for (column, normalization) in rule.normalized {
                guard case .withoutLeading(let prefix) = normalization, let index = columns.firstIndex(where: { $0.name == column }) else { continue }
                for row in rows.indices {
                    guard case .string(let text) = rows[row][index].storage, text.hasPrefix(prefix), text.count > prefix.count else { continue }
                    rows[row][index] = String(text.dropFirst(prefix.count)).databaseValue
                }
            }
        }
    }

    /// The tables read, in `MasterTable.all`'s order.
    package private(set) var tables: [Table] = []
    /// What was read but is not a row of the master, with how many (`StationPairs`).
    package private(set) var skipped: [String] = []

    /// Reads the `*.csv` files of `paths` (folders or files) as `profile` describes them.
    ///
    /// - Throws: `InputError` for a file that is not CSV, a header naming a column neither
    ///   declared nor ignored, a second file of a table, a field its column refuses.
    package init(_ paths: [String], profile: SourceProfile, _ declared: DeclaredSchema) throws {
        var pairs: (file: String, rows: [(line: Int, first: DatabaseValue, second: DatabaseValue)])?
        for path in try ImportSource.csvPaths(from: paths) {
            let read = try Self.read(path, profile: profile, declared)
            let other = read.pairs == nil ? tables.first(where: { $0.table == read.table.table })?.file : pairs?.file
            if let other {
                throw InputError(.csv, file: path, line: 1,
                                 message: "a second \(read.table.table.name) file (\(other) is one already; expected one file per table)")
            }
            if let found = read.pairs { pairs = (path, found) } else { tables.append(read.table) }
        }
        for index in tables.indices { tables[index].normalize(profile.rule(for: tables[index].table)) }
        if let pairs { try addConnections(pairs.file, pairs.rows, declared) }
        tables.sort { MasterTable.all.firstIndex(of: $0.table)! < MasterTable.all.firstIndex(of: $1.table)! }
    }

    /// The table `table`, if the source gives it.
    package func table(_ table: MasterTable) -> Table? { tables.first { $0.table == table } }

    private struct ReadFile {
        var table: Table
        /// A pairs file's rows, before their line is known.
        var pairs: [(line: Int, first: DatabaseValue, second: DatabaseValue)]?
    }

    /// One file: its header against the master's table and the profile's rule, then its rows.
    private static func read(_ path: String, profile: SourceProfile, _ declared: DeclaredSchema) throws -> ReadFile {
        let reader = CSVReader(path: path, displayName: path)
        var header: [String] = []
        guard try reader.firstRecord({ record in header = record.fields.map { TableHeader.trimmingBlanks(String(decoding: $0, as: UTF8.self)).lowercased() } }) else {
            throw InputError(.csv, file: path, line: nil, message: "empty file (expected a header line, then one row per record)")
        }
        guard let table = TableHeader.table(named: header, declared) else {
            throw InputError(.csv, file: path, line: 1, message: "no table of the master has the columns of this header (\(header.joined(separator: ",")))")
        }
        let rule = profile.rule(for: table)
        let plan = try FieldPlan(header: header, table: table, rule: rule, file: path, source: profile.name)
        let decoder = FieldDecoder(file: path, columns: plan.columns)
        var rows: [[DatabaseValue]] = [], lines: [Int] = []
        var lineOfKey: [ArraySlice<DatabaseValue>: Int] = [:]
        // A pairs file repeats pairs (TrainLCD's does, 30 times): they are counted once their line is known.
        let keyCount = rule.pairs == nil ? table.keyColumns.count : 0
        var isHeader = true
        try reader.forEachRecord { record in
            if isHeader {
                isHeader = false
                return
            }
            guard record.fieldCount == header.count else {
                throw InputError(.csv, file: path, line: record.line, message: "\(record.fieldCount) fields, expected \(header.count) as in the header")
            }
            var row: [DatabaseValue] = []
            row.reserveCapacity(plan.columns.count)
            for (index, position) in plan.positions.enumerated() {
                let field = record.field(position)
                let mapped = plan.values[index]?[String(decoding: field, as: UTF8.self)]
                let value = try mapped.map { text in
                    try Array(text.utf8).withUnsafeBufferPointer { try decoder.parse($0, column: index, line: record.line).databaseValue }
                } ?? decoder.parse(field, column: index, line: record.line).databaseValue
                row.append(value)
            }
            if keyCount > 0, let first = lineOfKey.updateValue(record.line, forKey: row.prefix(keyCount)) {
                let key = zip(plan.columns, row.prefix(keyCount)).map { "\($0.name) \($1)" }.joined(separator: ", ")
                throw InputError(.csv, file: path, line: record.line, message: "\(key) again (first on line \(first); expected one row per key)")
            }
            rows.append(row)
            lines.append(record.line)
        }
        let read = Table(table: table, file: path, columns: plan.columns, rows: rows, lines: lines)
        guard rule.pairs != nil else { return ReadFile(table: read, pairs: nil) }
        return ReadFile(table: read, pairs: zip(rows, lines).map { (line: $1, first: $0[0], second: $0[1]) })
    }

    /// The connections of a pairs file: each pair on one line of the stations read.
    private mutating func addConnections(_ file: String, _ pairs: [(line: Int, first: DatabaseValue, second: DatabaseValue)],
                                         _ declared: DeclaredSchema) throws {
        let connections = declared[.connections]
        guard let stations = table(.stations), let line = stations.columns.firstIndex(where: { $0.name == "line_cd" }) else {
            throw InputError(.csv, file: file, line: nil, message: "station pairs without a stations file (expected the source's stations in the same import: a pair's line is its stations')")
        }
        var lineOf: [DatabaseValue: DatabaseValue] = [:]
        for row in stations.rows { lineOf[row[0]] = row[line] }
        var read = Table(table: connections, file: file, columns: connections.columns, rows: [], lines: [])
        var seen = Set<[DatabaseValue]>()
        var across = 0, dangling = 0, repeated = 0
        for pair in pairs {
            guard let first = lineOf[pair.first], let second = lineOf[pair.second] else {
                dangling += 1
                continue
            }
            guard first == second else {
                across += 1
                continue
            }
            let row = [first, pair.first, pair.second]
            guard seen.insert(row).inserted else {
                repeated += 1
                continue
            }
            read.rows.append(row)
            read.lines.append(pair.line)
        }
        tables.append(read)
        let name = (file as NSString).lastPathComponent
        if across > 0 { skipped.append("\(name): \(across) pairs across two lines (transfers, not connections)") }
        if dangling > 0 { skipped.append("\(name): \(dangling) pairs naming a station the stations file lacks") }
        if repeated > 0 { skipped.append("\(name): \(repeated) pairs listed twice") }
    }
}

/// Which field of a source's record is which of the master's columns.
private struct FieldPlan {
    /// The columns read, in the master's order.
    let columns: [MasterTable.Column]
    /// For each column read, its field's position in the record.
    let positions: [Int]
    /// For each column read, the profile's map of published values.
    let values: [[String: String]?]

    init(header: [String], table: MasterTable, rule: SourceProfile.TableRule, file: String, source: String) throws {
        var positionOf: [String: Int] = [:]
        for (position, name) in header.enumerated() {
            let column = table.headerAliases[name] ?? name
            if table.column(named: column) != nil {
                if positionOf[column] != nil {
                    throw InputError(.csv, file: file, line: 1, message: "column \"\(column)\" appears twice in the header")
                }
                positionOf[column] = position
            } else if !rule.ignored.contains(name) {
                throw InputError(.csv, file: file, line: 1, message: "unknown column \(name.quotedForMessage()) in field \(position + 1) of a \(table.name) header of source \(source) "
                    + "(expected one of the master's: \(table.columnNames.joined(separator: ", ")); or one the source's profile ignores: \(rule.ignored.sorted().joined(separator: ", ")))")
            }
        }
        // A pairs file gives its two stations; their line comes from the stations read.
        let needed = rule.pairs == nil ? table.keyColumns : ["station_cd1", "station_cd2"]
        for key in needed where positionOf[key] == nil {
            throw InputError(.csv, file: file, line: 1, message: "missing key column \"\(key)\" in a \(table.name) header (expected: \(needed.joined(separator: ", ")))")
        }
        let read = rule.pairs == nil ? table.columns.filter { positionOf[$0.name] != nil } : needed.compactMap { table.column(named: $0) }
        columns = read
        positions = read.map { positionOf[$0.name]! }
        values = read.map { rule.values[$0.name] }
    }
}

extension FieldDecoder.Value {
    /// The value as the master stores it.
    package var databaseValue: DatabaseValue {
        switch self {
        case .null: return .null
        case .integer(let value): return value.databaseValue
        case .real(let value): return value.databaseValue
        case .text(let bytes): return String(decoding: bytes, as: UTF8.self).databaseValue
        }
    }
}
