import Foundation
import StationSchema
import StationSupport

/// One line of a plan file, decoded with `JSONDecoder`: the header `{"plan": …, "memo": …}`, or
/// one operation. Problems are thrown as `PlanLine.Problem` with the words a curator reads.
package struct PlanLine: Decodable {
    package var operation: PlanOperation?
    package var title: String?
    package var memo: String?

    package struct Problem: Error {
        package let message: String
    }

    /// The operations' names in plans, each with the fields it takes.
    package enum Op: String, CaseIterable {
        case add, edit, close, restore, split, connect, disconnect
        case transferLine = "transfer_line", moveStations = "move_stations", recordSplit = "record_split"

        package static let ordered: [Op] = [.add, .edit, .transferLine, .moveStations, .close, .restore, .split, .recordSplit, .connect, .disconnect]

        package var fields: [String] {
            switch self {
            case .add: return ["table", "row"]
            case .edit: return ["table", "key", "set"]
            case .transferLine: return ["line", "to_company"]
            case .moveStations: return ["stations", "to_line"]
            case .close: return ["table", "key", "date", "cascade"]
            case .restore: return ["table", "key"]
            case .split: return ["old", "new", "line", "set", "connect_to"]
            case .recordSplit: return ["old", "new"]
            case .connect, .disconnect: return ["line", "stations"]
            }
        }
    }

    private struct Key: CodingKey {
        package let stringValue: String
        package init(_ name: String) { stringValue = name }
        package init?(stringValue: String) { self.stringValue = stringValue }
        package var intValue: Int? { nil }
        package init?(intValue: Int) { nil }
    }

    /// A JSON value where a plan allows a number, a string, a boolean or null.
    private enum Scalar: Decodable {
        case number(Double, text: String), text(String), bool(Bool), null

        package init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .null }
            else if let value = try? container.decode(Bool.self) { self = .bool(value) }
            else if let value = try? container.decode(Int64.self) { self = .number(Double(value), text: String(value)) }
            else if let value = try? container.decode(Double.self) { self = .number(value, text: String(value)) }
            else if let value = try? container.decode(String.self) { self = .text(value) }
            else { throw Problem(message: "expected a number, a text, true/false or null") }
        }

        /// As a column value: null is NULL (empty), numbers as written.
        package var columnText: String {
            switch self {
            case let .number(_, text): return text
            case let .text(text): return text
            case let .bool(value): return value ? "1" : "0"
            case .null: return ""
            }
        }

        package var shown: String {
            switch self {
            case let .number(_, text): return text
            case let .text(text): return text
            case let .bool(value): return String(value)
            case .null: return "null"
            }
        }

        package var code: Int64? {
            switch self {
            case let .number(value, _): return Int64(exactly: value)
            case let .text(text): return Int64(text)
            default: return nil
            }
        }
    }

    private static let expectedOps = "expected one of: \(Op.ordered.map(\.rawValue).joined(separator: ", "))"

    package init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let fields = container.allKeys.map(\.stringValue)
        guard fields.contains("op") else {
            if fields.contains("plan") {
                title = try container.decode(Scalar.self, forKey: Key("plan")).shown
                memo = try container.decodeIfPresent(Scalar.self, forKey: Key("memo"))?.shown
                return
            }
            throw Problem(message: "missing \"op\" (\(Self.expectedOps))")
        }
        let name = try container.decode(Scalar.self, forKey: Key("op")).shown
        guard let op = Op(rawValue: name) else {
            let nearest = NearestName.nearest(to: name, among: Op.ordered.map(\.rawValue))
            throw Problem(message: "unknown op \(name.quotedForMessage())" + (nearest.map { " (did you mean \"\($0)\"? " } ?? " (")
                + Self.expectedOps + ")")
        }
        for field in fields.sorted() where field != "op" && !op.fields.contains(field) {
            let nearest = NearestName.nearest(to: field, among: op.fields)
            throw Problem(message: "unknown field \(field.quotedForMessage()) for \(op.rawValue)"
                + (nearest.map { " (did you mean \"\($0)\"? " } ?? " (") + "expected: \(op.fields.joined(separator: ", ")))")
        }
        let read = Reader(container: container)
        switch op {
        case .add: operation = .add(table: try read.table(), values: try read.values("row"))
        case .edit: operation = .edit(table: try read.table(), key: try read.key(), values: try read.values("set"))
        case .transferLine: operation = .transferLine(line: try read.code("line"), toCompany: try read.code("to_company"))
        case .moveStations: operation = .moveStations(stations: try read.codes("stations"), toLine: try read.code("to_line"))
        case .close:
            operation = .close(table: try read.table(), key: try read.key(), date: try read.optionalText("date"),
                               cascade: try container.decodeIfPresent(Bool.self, forKey: Key("cascade")) ?? false)
        case .restore: operation = .restore(table: try read.table(), key: try read.key())
        case .split:
            operation = .split(
                old: try read.code("old"), new: try read.code("new"), line: try read.has("line") ? try read.code("line") : nil,
                values: try read.has("set") ? try read.values("set") : [:],
                connectTo: try read.has("connect_to") ? try read.codes("connect_to") : [])
        case .recordSplit: operation = .recordSplit(old: try read.code("old"), new: try read.code("new"))
        case .connect: operation = .connect(line: try read.code("line"), stations: try read.codes("stations"))
        case .disconnect: operation = .disconnect(line: try read.code("line"), stations: try read.codes("stations"))
        }
    }

    /// Typed reads of one operation's fields, each failing with what was expected.
    private struct Reader {
        package let container: KeyedDecodingContainer<Key>

        package func has(_ field: String) throws -> Bool {
            guard container.contains(Key(field)) else { return false }
            return try !container.decodeNil(forKey: Key(field))
        }

        package func table() throws -> MasterTable {
            guard container.contains(Key("table")) else { throw Problem(message: "missing \"table\"") }
            let name = try container.decode(Scalar.self, forKey: Key("table")).shown
            guard let table = MasterTable.named(name) else {
                throw Problem(message: "unknown table \(name.quotedForMessage()) (expected one of: \(MasterTable.all.map(\.name).joined(separator: ", ")))")
            }
            return table
        }

        package func code(_ field: String) throws -> Int64 {
            guard container.contains(Key(field)) else { throw Problem(message: "missing \"\(field)\" (expected a code)") }
            guard let code = (try? container.decode(Scalar.self, forKey: Key(field)))?.code else {
                throw Problem(message: "\"\(field)\" is not a code (expected a whole number)")
            }
            return code
        }

        package func codes(_ field: String) throws -> [Int64] {
            guard container.contains(Key(field)), let list = try? container.decode([Scalar].self, forKey: Key(field)), !list.isEmpty else {
                throw Problem(message: "missing \"\(field)\" (expected a list of codes)")
            }
            return try list.map { item in
                guard case .number = item, let code = item.code else {
                    throw Problem(message: "\"\(field)\" holds \(item.shown), which is not a code (expected whole numbers)")
                }
                return code
            }
        }

        package func key() throws -> [String] {
            guard container.contains(Key("key")) else {
                throw Problem(message: "missing \"key\" (expected a code, or [line_cd, station_cd1, station_cd2])")
            }
            if let list = try? container.decode([Scalar].self, forKey: Key("key")) { return list.map(\.shown) }
            return [try container.decode(Scalar.self, forKey: Key("key")).shown]
        }

        package func optionalText(_ field: String) throws -> String? {
            try container.decodeIfPresent(Scalar.self, forKey: Key(field)).flatMap { if case .null = $0 { return nil } else { return $0.shown } }
        }

        package func values(_ field: String) throws -> [String: String] {
            guard let object = try? container.decode([String: Scalar].self, forKey: Key(field)) else {
                throw Problem(message: "missing \"\(field)\" (expected an object of column: value)")
            }
            return object.mapValues(\.columnText)
        }
    }
}
