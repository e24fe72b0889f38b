import Foundation
import GRDB

/// Turns operations into row changes against a `WorkingState`, refusing what the rules refuse.
struct PlanApplier {
    let state: WorkingState
    /// Things the curator should know that are not errors (connections that went with a move).
    var notes: [String] = []

    init(state: WorkingState) { self.state = state }

    mutating func apply(_ located: LocatedOperation) throws {
        func fail(_ message: String) -> PlanError { PlanError(file: located.file, line: located.line, message: message) }
        func typed(_ table: MasterTable, _ values: [String: String]) throws -> WorkingState.Values {
            var result: WorkingState.Values = [:]
            for (name, text) in values {
                guard let column = table.column(named: name) else {
                    throw fail("\(table.name) has no column \(name.quotedForMessage()) (expected one of: \(table.columnNames.joined(separator: ", ")))")
                }
                do {
                    result[name] = try FieldDecoder.decode(ArraySlice(Array(text.utf8)), as: column, file: located.file, line: located.line ?? 0)
                } catch let error as CSVError {
                    throw fail(error.message)
                }
            }
            return result
        }
        func key(_ table: MasterTable, _ parts: [String]) throws -> [DatabaseValue] {
            guard parts.count == table.keyColumns.count else {
                throw fail("a \(table.name) key has \(table.keyColumns.count) part(s): \(table.keyColumns.joined(separator: ", "))")
            }
            return try parts.map { part in
                guard let code = Int64(part.trimmingCharacters(in: .whitespaces)) else { throw fail("key \(part.quotedForMessage()) is not a code (expected a whole number)") }
                return code.databaseValue
            }
        }
        func existing(_ table: MasterTable, _ key: [DatabaseValue]) throws -> WorkingState.Values {
            guard let row = try state.row(table, key: key) else {
                throw fail("\(table.name) \(Self.text(key)) does not exist")
            }
            return row
        }
        func station(_ code: Int64) throws -> WorkingState.Values { try existing(.stations, [code.databaseValue]) }
        func requireLine(_ code: Int64) throws { _ = try existing(.lines, [code.databaseValue]) }

        switch located.operation {
        case let .add(table, values):
            let row = try typed(table, values)
            for column in table.columns where column.isRequired && (row[column.name] ?? .null).isNull {
                throw fail("\(column.name) is required to add a row to \(table.name)")
            }
            let rowKey = state.key(table, row)
            if try state.row(table, key: rowKey) != nil { throw fail("\(table.name) \(Self.text(rowKey)) already exists (use edit)") }
            var full = Dictionary(uniqueKeysWithValues: table.columnNames.map { ($0, DatabaseValue.null) })
            for column in table.columns { if let value = column.defaultValue { full[column.name] = value.databaseValue } }
            full.merge(row) { $1 }
            state.put(table, full)

        case let .edit(table, keyParts, values):
            let rowKey = try key(table, keyParts)
            var row = try existing(table, rowKey)
            let changes = try typed(table, values)
            for name in table.keyColumns where changes[name] != nil && changes[name] != row[name] {
                throw fail("\(name) is part of the key and cannot be edited (add a new row, or split a station)")
            }
            row.merge(changes) { $1 }
            state.put(table, row)

        case let .transferLine(line, company):
            var row = try existing(.lines, [line.databaseValue])
            _ = try existing(.companies, [company.databaseValue])
            row["company_cd"] = company.databaseValue
            state.put(.lines, row)

        case let .moveStations(codes, toLine):
            try requireLine(toLine)
            let moving = Set(codes)
            var fromLines = Set<Int64>()
            for code in codes {
                var row = try station(code)
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

        case let .close(table, keyParts, date, cascade):
            guard table.closesByStatus else { throw fail("\(table.name) rows are removed, not closed (use disconnect for connections)") }
            let rowKey = try key(table, keyParts)
            var row = try existing(table, rowKey)
            if row["e_status"] == MasterTable.closedStatus.databaseValue { throw fail("\(table.name) \(Self.text(rowKey)) is already closed") }
            let closeDate = try date.map { try typed(.stations, ["close_ymd": $0])["close_ymd"]! }
            let dependents = try openDependents(table, rowKey)
            if !dependents.isEmpty && !cascade {
                throw fail("closing \(table.name) \(Self.text(rowKey)) leaves open: \(dependents.map(\.description).prefix(12).joined(separator: ", "))"
                    + (dependents.count > 12 ? " and \(dependents.count - 12) more" : "") + " (close them too with cascade)")
            }
            row["e_status"] = MasterTable.closedStatus.databaseValue
            if table == .stations, let closeDate { row["close_ymd"] = closeDate }
            state.put(table, row)
            for dependent in dependents {
                var dependentRow = try existing(dependent.table, [dependent.code.databaseValue])
                dependentRow["e_status"] = MasterTable.closedStatus.databaseValue
                if dependent.table == .stations, let closeDate { dependentRow["close_ymd"] = closeDate }
                state.put(dependent.table, dependentRow)
            }

        case let .restore(table, keyParts):
            guard table.closesByStatus else { throw fail("\(table.name) rows are removed, not closed: add it again instead") }
            let rowKey = try key(table, keyParts)
            var row = try existing(table, rowKey)
            if row["e_status"] != MasterTable.closedStatus.databaseValue { throw fail("\(table.name) \(Self.text(rowKey)) is not closed") }
            row["e_status"] = 0.databaseValue
            if table == .stations { row["close_ymd"] = .null }
            state.put(table, row)

        case let .split(old, new, line, values, connectTo):
            if old == new { throw fail("split \(old) → \(new): the old and new codes are the same (expected two stations)") }
            guard var row = try state.row(.stations, key: [old.databaseValue]) else {
                throw fail("split \(old) → \(new): station \(old) does not exist (expected an existing station to split)")
            }
            if row["e_status"] == MasterTable.closedStatus.databaseValue {
                throw fail("split \(old) → \(new): station \(old) is closed (expected an open station; restore it first)")
            }
            if try state.row(.stations, key: [new.databaseValue]) != nil {
                throw fail("split \(old) → \(new): station code \(new) is already in use (expected a new code)")
            }
            row["station_cd"] = new.databaseValue
            if let line { try requireLine(line); row["line_cd"] = line.databaseValue }
            row["e_sort"] = new.databaseValue
            row.merge(try typed(.stations, values)) { $1 }
            state.put(.stations, row)
            state.duplicate(old: old, new: new)
            let newLine = row["line_cd"]!
            for other in connectTo {
                _ = try station(other)
                state.put(.connections, ["line_cd": newLine, "station_cd1": new.databaseValue, "station_cd2": other.databaseValue])
            }

        case let .recordSplit(old, new):
            if old == new { throw fail("split \(old) → \(new): the old and new codes are the same (expected two stations)") }
            _ = try station(old)
            _ = try station(new)
            state.duplicate(old: old, new: new)

        case let .connect(line, codes):
            try requireLine(line)
            guard codes.count >= 2 else { throw fail("connect needs at least two stations") }
            for code in codes { _ = try station(code) }
            for (a, b) in zip(codes, codes.dropFirst()) {
                state.put(.connections, ["line_cd": line.databaseValue, "station_cd1": a.databaseValue, "station_cd2": b.databaseValue])
            }

        case let .disconnect(line, codes):
            guard codes.count >= 2 else { throw fail("disconnect needs at least two stations") }
            for (a, b) in zip(codes, codes.dropFirst()) {
                let connection = [line, a, b].map(\.databaseValue)
                guard try state.row(.connections, key: connection) != nil else {
                    throw fail("connection \(line)/\(a)/\(b) does not exist")
                }
                state.remove(.connections, key: connection)
            }
        }
    }

    struct Dependent: CustomStringConvertible {
        var table: MasterTable
        var code: Int64
        var name: String
        var description: String { "\(table == .lines ? "line" : "station") \(code) \(name)" }
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

    static func text(_ key: [DatabaseValue]) -> String { key.map { $0.description }.joined(separator: "/") }
}
