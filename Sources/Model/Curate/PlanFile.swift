import Foundation

/// A plan file: one real-world event as a list of operations, committed as one version.
///
/// Format: JSON Lines. Each non-blank line is one JSON object with an `"op"`; lines that
/// start with `#` are comments (say there where a code is invented). The optional first
/// object `{"plan": "title", "memo": "…"}` names the plan. For example:
///
///     # 2010-12-04: the Tohoku Main Line north of Morioka passes to Aoimori Railway
///     {"plan": "Aoimori Railway", "memo": "Tohoku Shinkansen reaches Shin-Aomori"}
///     {"op": "add", "table": "companies", "row": {"company_cd": 246, "company_name": "青い森鉄道", "e_status": 0}}
///     {"op": "transfer_line", "line": 11201, "to_company": 246}
///     {"op": "split", "old": 1120101, "new": 9920607, "line": 99206}
///
/// Operations: `add` (table, row), `edit` (table, key, set), `transfer_line` (line, to_company),
/// `move_stations` (stations, to_line), `close` (table, key, date?, cascade?), `restore` (table, key),
/// `split` (old, new, line?, set?, connect_to?), `record_split` (old, new: both existing),
/// `connect` / `disconnect` (line, stations).
/// A key is a code, or `[line_cd, station_cd1, station_cd2]` for connections.
public struct PlanFile: Sendable {
    public var title: String?
    public var memo: String?
    public var operations: [LocatedOperation]

    public static func load(_ path: String) throws -> PlanFile {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw PlanError(file: path, line: nil, message: "no such file (expected a JSON Lines plan, e.g. datasets/plans/2024-03-16-hokuriku.jsonl)")
        }
        guard !isDirectory.boolValue, let data = FileManager.default.contents(atPath: path) else {
            throw PlanError(file: path, line: nil, message: "cannot read the plan (expected a readable JSON Lines file, not a folder)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw PlanError(file: path, line: nil, message: "not UTF-8 text (expected a JSON Lines plan)")
        }
        var plan = PlanFile(title: nil, memo: nil, operations: [])
        for (index, rawLine) in text.components(separatedBy: "\n").enumerated() {
            let line = index + 1
            let content = rawLine.trimmingCharacters(in: .whitespacesAndNewlines)
            if content.isEmpty || content.hasPrefix("#") { continue }
            let object: [String: Any]
            do {
                guard let parsed = try JSONSerialization.jsonObject(with: Data(content.utf8)) as? [String: Any] else {
                    throw PlanError(file: path, line: line, message: "expected one JSON object on this line")
                }
                object = parsed
            } catch let error as PlanError {
                throw error
            } catch {
                throw PlanError(file: path, line: line, message: "not valid JSON (expected one JSON object per line, e.g. {\"op\": \"close\", \"table\": \"stations\", \"key\": 1141543})")
            }
            if object["op"] == nil, let title = object["plan"] {
                plan.title = "\(title)"
                plan.memo = object["memo"].map { "\($0)" }
                continue
            }
            let reader = PlanObject(object: object, file: path, line: line)
            plan.operations.append(LocatedOperation(try reader.operation(), file: path, line: line))
        }
        if plan.operations.isEmpty { throw PlanError(file: path, line: nil, message: "no operations (expected one JSON object per line with an \"op\")") }
        return plan
    }
}

/// Reads one plan line's object into an operation, naming what is missing or wrong.
private struct PlanObject {
    let object: [String: Any]
    let file: String
    let line: Int

    func fail(_ message: String) -> PlanError { PlanError(file: file, line: line, message: message) }

    func operation() throws -> PlanOperation {
        guard let op = object["op"] as? String else { throw fail("missing \"op\" (expected one of: \(Self.operations.joined(separator: ", ")))") }
        let known = Self.fields[op] ?? []
        for key in object.keys where key != "op" && !known.contains(key) {
            throw fail("unknown field \(key.quotedForMessage()) for \(op) (expected: \(known.joined(separator: ", ")))")
        }
        switch op {
        case "add": return .add(table: try table(), values: try values("row"))
        case "edit": return .edit(table: try table(), key: try key(), values: try values("set"))
        case "transfer_line": return .transferLine(line: try code("line"), toCompany: try code("to_company"))
        case "move_stations": return .moveStations(stations: try codes("stations"), toLine: try code("to_line"))
        case "close":
            return .close(table: try table(), key: try key(), date: try optionalText("date"), cascade: object["cascade"] as? Bool ?? false)
        case "restore": return .restore(table: try table(), key: try key())
        case "split":
            return .split(
                old: try code("old"), new: try code("new"), line: object["line"] == nil ? nil : try code("line"),
                values: object["set"] == nil ? [:] : try values("set"),
                connectTo: object["connect_to"] == nil ? [] : try codes("connect_to"))
        case "record_split": return .recordSplit(old: try code("old"), new: try code("new"))
        case "connect": return .connect(line: try code("line"), stations: try codes("stations"))
        case "disconnect": return .disconnect(line: try code("line"), stations: try codes("stations"))
        default: throw fail("unknown op \(op.quotedForMessage()) (expected one of: \(Self.operations.joined(separator: ", ")))")
        }
    }

    static let fields: [String: [String]] = [
        "add": ["table", "row"], "edit": ["table", "key", "set"], "transfer_line": ["line", "to_company"],
        "move_stations": ["stations", "to_line"], "close": ["table", "key", "date", "cascade"], "restore": ["table", "key"],
        "split": ["old", "new", "line", "set", "connect_to"], "record_split": ["old", "new"], "connect": ["line", "stations"], "disconnect": ["line", "stations"],
    ]
    static let operations = ["add", "edit", "transfer_line", "move_stations", "close", "restore", "split", "record_split", "connect", "disconnect"]

    func table() throws -> MasterTable {
        guard let name = object["table"] as? String else { throw fail("missing \"table\"") }
        guard let table = MasterTable.named(name) else {
            throw fail("unknown table \(name.quotedForMessage()) (expected one of: \(MasterTable.all.map(\.name).joined(separator: ", ")))")
        }
        return table
    }

    func code(_ field: String) throws -> Int64 {
        if let number = object[field] as? NSNumber, let value = Int64(exactly: number.doubleValue) { return value }
        if let text = object[field] as? String, let value = Int64(text) { return value }
        throw fail(object[field] == nil ? "missing \"\(field)\" (expected a code)" : "\"\(field)\" is not a code (expected a whole number)")
    }

    func codes(_ field: String) throws -> [Int64] {
        guard let list = object[field] as? [Any], !list.isEmpty else { throw fail("missing \"\(field)\" (expected a list of codes)") }
        return try list.map { item in
            guard let number = item as? NSNumber, let value = Int64(exactly: number.doubleValue) else {
                throw fail("\"\(field)\" holds \(item), which is not a code (expected whole numbers)")
            }
            return value
        }
    }

    func key() throws -> [String] {
        switch object["key"] {
        case let list as [Any]: return list.map { "\($0)" }
        case let value?: return ["\(value)"]
        case nil: throw fail("missing \"key\" (expected a code, or [line_cd, station_cd1, station_cd2])")
        }
    }

    func optionalText(_ field: String) throws -> String? {
        guard let value = object[field] else { return nil }
        return "\(value)"
    }

    func values(_ field: String) throws -> [String: String] {
        guard let dictionary = object[field] as? [String: Any] else { throw fail("missing \"\(field)\" (expected an object of column: value)") }
        return dictionary.mapValues { value in
            if value is NSNull { return "" }
            if let number = value as? NSNumber { return number.stringValue }
            return "\(value)"
        }
    }
}
