import Foundation
import GRDB
import StationCSV
import StationSchema
import StationSupport

/// Turns operations into row changes against a `WorkingState`, refusing what the rules refuse.
package struct PlanApplier {
    package let state: WorkingState
    /// Things the curator should know that are not errors (connections that went with a move).
    package var notes: [String] = []

    package init(state: WorkingState) { self.state = state }

    /// Applies one operation, or throws a `InputError` naming its line and why.
    package mutating func apply(_ located: LocatedOperation) throws {
        let context = OperationContext(located: located, state: state)
        switch located.operation {
        case let .add(table, values): try add(table, values, context)
        case let .edit(table, keyParts, values): try edit(table, keyParts, values, context)
        case let .transferLine(line, company):
            var row = try context.existing(.lines, [line.databaseValue])
            _ = try context.existing(.companies, [company.databaseValue])
            row["company_cd"] = company.databaseValue
            state.put(.lines, row)
        case let .moveStations(codes, toLine): try moveStations(codes, to: toLine, context)
        case let .close(table, keyParts, date, cascade): try close(table, keyParts, date: date, cascade: cascade, context)
        case let .restore(table, keyParts): try restore(table, keyParts, context)
        case let .split(old, new, line, values, connectTo): try split(old, new, line: line, values, connectTo: connectTo, context)
        case let .recordSplit(old, new):
            if old == new { throw context.fail("split \(old) → \(new): the old and new codes are the same (expected two stations)") }
            _ = try context.station(old)
            _ = try context.station(new)
            state.duplicate(old: old, new: new)
        case let .connect(line, codes):
            try context.requireLine(line)
            guard codes.count >= 2 else { throw context.fail("connect needs at least two stations") }
            for code in codes { _ = try context.station(code) }
            for (a, b) in zip(codes, codes.dropFirst()) {
                state.put(.connections, ["line_cd": line.databaseValue, "station_cd1": a.databaseValue, "station_cd2": b.databaseValue])
            }
        case let .disconnect(line, codes):
            guard codes.count >= 2 else { throw context.fail("disconnect needs at least two stations") }
            for (a, b) in zip(codes, codes.dropFirst()) {
                let connection = [line, a, b].map(\.databaseValue)
                guard try state.row(.connections, key: connection) != nil else {
                    throw context.fail("connection \(line)/\(a)/\(b) does not exist")
                }
                state.remove(.connections, key: connection)
            }
        }
    }

    /// What every operation needs to read its values and the rows it names, and to say why it
    /// is refused with the plan's file and line.
    private struct OperationContext {
        package let located: LocatedOperation
        package let state: WorkingState

        package func fail(_ message: String) -> InputError { InputError(.plan, file: located.file, line: located.line, message: message) }

        /// Values as the CSV reader reads them: the same domains, the same messages.
        package func typed(_ table: MasterTable, _ values: [String: String]) throws -> WorkingState.Values {
            let table = state.declared[table]
            var result: WorkingState.Values = [:]
            for (name, text) in values {
                guard let column = table.column(named: name) else {
                    throw fail("\(table.name) has no column \(name.quotedForMessage()) (expected one of: \(table.columnNames.joined(separator: ", ")))")
                }
                do {
                    result[name] = try FieldDecoder.decode(ArraySlice(Array(text.utf8)), as: column, file: located.file, line: located.line ?? 0)
                } catch let error as InputError where error.input == .csv {
                    throw fail(error.message)
                }
            }
            return result
        }

        package func key(_ table: MasterTable, _ parts: [String]) throws -> [DatabaseValue] {
            guard parts.count == table.keyColumns.count else {
                throw fail("a \(table.name) key has \(table.keyColumns.count) part(s): \(table.keyColumns.joined(separator: ", "))")
            }
            return try parts.map { part in
                guard let code = Int64(part.trimmingCharacters(in: .whitespaces)) else { throw fail("key \(part.quotedForMessage()) is not a code (expected a whole number)") }
                return code.databaseValue
            }
        }

        package func existing(_ table: MasterTable, _ key: [DatabaseValue]) throws -> WorkingState.Values {
            guard let row = try state.row(table, key: key) else {
                throw fail("\(table.name) \(PlanApplier.text(key)) does not exist")
            }
            return row
        }

        package func station(_ code: Int64) throws -> WorkingState.Values { try existing(.stations, [code.databaseValue]) }
        package func requireLine(_ code: Int64) throws { _ = try existing(.lines, [code.databaseValue]) }
    }

    private func add(_ table: MasterTable, _ values: [String: String], _ context: OperationContext) throws {
        let table = state.declared[table]
        let row = try context.typed(table, values)
        for column in table.columns where column.isRequired && (row[column.name] ?? .null).isNull {
            throw context.fail("\(column.name) is required to add a row to \(table.name)")
        }
        let rowKey = state.key(table, row)
        if try state.row(table, key: rowKey) != nil { throw context.fail("\(table.name) \(Self.text(rowKey)) already exists (use edit)") }
        var full = Dictionary(uniqueKeysWithValues: table.columnNames.map { ($0, DatabaseValue.null) })
        for column in table.columns { if let value = column.defaultValue { full[column.name] = value.databaseValue } }
        full.merge(row) { $1 }
        state.put(table, full)
    }

    private func edit(_ table: MasterTable, _ keyParts: [String], _ values: [String: String], _ context: OperationContext) throws {
        let rowKey = try context.key(table, keyParts)
        var row = try context.existing(table, rowKey)
        let changes = try context.typed(table, values)
        for name in table.keyColumns where changes[name] != nil && changes[name] != row[name] {
            throw context.fail("\(name) is part of the key and cannot be edited (add a new row, or split a station)")
        }
        row.merge(changes) { $1 }
        state.put(table, row)
    }

    /// Moves stations to another line; their connections on the lines they left go with them
    /// when both ends move, and are removed (with a note) when one end stays.
    private mutating func moveStations(_ codes: [Int64], to toLine: Int64, _ context: OperationContext) throws {
        try context.requireLine(toLine)
        let moving = Set(codes)
        var fromLines = Set<Int64>()
        for code in codes {
            var row = try context.station(code)
            fromLines.insert(Int64.fromDatabaseValue(row["line_cd"]!)!)
            row["line_cd"] = toLine.databaseValue
            state.put(.stations, row)
        }
        for line in fromLines.sorted() {
            for connection in try state.rows(.connections, where: "line_cd", is: line.databaseValue) {
                let a = Int64.fromDatabaseValue(connection["station_cd1"]!)!, b = Int64.fromDatabaseValue(connection["station_cd2"]!)!
                guard moving.contains(a) || moving.contains(b) else { continue }
                state.remove(.connections, key: state.key(.connections, connection))
                if moving.contains(a) && moving.contains(b) {
                    state.put(.connections, ["line_cd": toLine.databaseValue, "station_cd1": a.databaseValue, "station_cd2": b.databaseValue])
                } else {
                    notes.append("connection \(line)/\(a)/\(b) removed: it joined a moved station to one left on line \(line)")
                }
            }
        }
    }

    /// Closes a row (e_status 2, with the date for a station), and with `cascade` what it
    /// would leave open; without it, refuses and names them.
    private func close(_ table: MasterTable, _ keyParts: [String], date: String?, cascade: Bool, _ context: OperationContext) throws {
        guard table.closesByStatus else { throw context.fail("\(table.name) rows are removed, not closed (use disconnect for connections)") }
        let rowKey = try context.key(table, keyParts)
        var row = try context.existing(table, rowKey)
        if row["e_status"] == MasterTable.closedStatus.databaseValue { throw context.fail("\(table.name) \(Self.text(rowKey)) is already closed") }
        let closeDate = try date.map { try context.typed(.stations, ["close_ymd": $0])["close_ymd"]! }
        let dependents = try openDependents(table, rowKey)
        if !dependents.isEmpty && !cascade {
            throw context.fail("closing \(table.name) \(Self.text(rowKey)) leaves open: \(dependents.map(\.description).prefix(12).joined(separator: ", "))"
                + (dependents.count > 12 ? " and \(dependents.count - 12) more" : "") + " (close them too: --cascade, or \"cascade\": true in a plan)")
        }
        row["e_status"] = MasterTable.closedStatus.databaseValue
        if table == .stations, let closeDate { row["close_ymd"] = closeDate }
        state.put(table, row)
        for dependent in dependents {
            var dependentRow = try context.existing(dependent.table, [dependent.code.databaseValue])
            dependentRow["e_status"] = MasterTable.closedStatus.databaseValue
            if dependent.table == .stations, let closeDate { dependentRow["close_ymd"] = closeDate }
            state.put(dependent.table, dependentRow)
        }
    }

    private func restore(_ table: MasterTable, _ keyParts: [String], _ context: OperationContext) throws {
        guard table.closesByStatus else { throw context.fail("\(table.name) rows are removed, not closed: add it again instead") }
        let rowKey = try context.key(table, keyParts)
        var row = try context.existing(table, rowKey)
        if row["e_status"] != MasterTable.closedStatus.databaseValue { throw context.fail("\(table.name) \(Self.text(rowKey)) is not closed") }
        row["e_status"] = 0.databaseValue
        if table == .stations { row["close_ymd"] = .null }
        state.put(table, row)
    }

    /// A new station copied from an open one under a new code, on `line` if given, with the
    /// DUPLICATE that carries the old one's records, and connections to `connectTo`.
    private func split(_ old: Int64, _ new: Int64, line: Int64?, _ values: [String: String], connectTo: [Int64], _ context: OperationContext) throws {
        if old == new { throw context.fail("split \(old) → \(new): the old and new codes are the same (expected two stations)") }
        guard var row = try state.row(.stations, key: [old.databaseValue]) else {
            throw context.fail("split \(old) → \(new): station \(old) does not exist (expected an existing station to split)")
        }
        if row["e_status"] == MasterTable.closedStatus.databaseValue {
            throw context.fail("split \(old) → \(new): station \(old) is closed (expected an open station; restore it first)")
        }
        if try state.row(.stations, key: [new.databaseValue]) != nil {
            throw context.fail("split \(old) → \(new): station code \(new) is already in use (expected a new code)")
        }
        row["station_cd"] = new.databaseValue
        if let line { try context.requireLine(line); row["line_cd"] = line.databaseValue }
        row["e_sort"] = new.databaseValue
        row.merge(try context.typed(.stations, values)) { $1 }
        state.put(.stations, row)
        state.duplicate(old: old, new: new)
        let newLine = row["line_cd"]!
        for other in connectTo {
            _ = try context.station(other)
            state.put(.connections, ["line_cd": newLine, "station_cd1": new.databaseValue, "station_cd2": other.databaseValue])
        }
    }

    package struct Dependent: CustomStringConvertible {
        package var table: MasterTable
        package var code: Int64
        package var name: String
        package var description: String { "\(table == .lines ? "line" : "station") \(code) \(name)" }
    }

    /// What closing a company or line would leave open: its open lines, and their open stations.
    private func openDependents(_ table: MasterTable, _ key: [DatabaseValue]) throws -> [Dependent] {
        func open(_ rows: [WorkingState.Values]) -> [WorkingState.Values] {
            rows.filter { $0["e_status"] != MasterTable.closedStatus.databaseValue }
        }
        var result: [Dependent] = []
        var lines: [DatabaseValue] = []
        if table == .companies {
            for line in open(try state.rows(.lines, where: "company_cd", is: key[0])) {
                result.append(Dependent(table: .lines, code: Int64.fromDatabaseValue(line["line_cd"]!)!, name: String.fromDatabaseValue(line["line_name"]!) ?? ""))
                lines.append(line["line_cd"]!)
            }
        } else if table == .lines {
            lines = [key[0]]
        }
        for line in lines {
            for station in open(try state.rows(.stations, where: "line_cd", is: line)) {
                result.append(Dependent(table: .stations, code: Int64.fromDatabaseValue(station["station_cd"]!)!, name: String.fromDatabaseValue(station["station_name"]!) ?? ""))
            }
        }
        return result
    }

    package static func text(_ key: [DatabaseValue]) -> String { key.map { $0.description }.joined(separator: "/") }
}
