import Foundation
import StationSchema
import StationSQLite
import StationSupport

extension SourceProfile {
    /// What a profile file may say, and how: the one example every error points to.
    static let fileExample = """
        {"name": "mysource", "tables": {"stations": {"ignored": ["station_name_zh"], "values": {"e_status": {"3": "0"}}, \
        "normalized": {"address": "without-prefecture-name", "line_color_c": {"without-leading": "#"}}}, \
        "connections": {"pairs": "on-one-line"}}}
        """

    /// Reads a source the tool does not know from a JSON file (`import --profile FILE`,
    /// docs/curating.md, "A source the tool does not know"): its name, and per table the columns
    /// it ignores, its value maps, its normalizations and, for connections, whether its rows are
    /// station pairs. Every name is checked against `declared`: a table or column the master lacks,
    /// an ignored column the master declares (it would be read), a key named twice or a key this
    /// format does not have is refused naming the file and the key's path.
    ///
    /// - Throws: `InputError` naming `path` and the key at fault.
    public static func load(_ path: String, _ declared: DeclaredSchema) throws -> SourceProfile {
        func refuse(_ message: String) -> InputError { InputError(.profile, file: path, line: nil, message: message) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw refuse("cannot read the profile (expected a readable JSON file, e.g. \(fileExample))")
        }
        guard let text = String(data: data, encoding: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw refuse("not a JSON object (expected a source profile, e.g. \(fileExample))")
        }
        if let duplicate = try JSONDuplicateKeys().first(in: text) {
            throw refuse("\"\(duplicate.key)\" is named twice in \(duplicate.object) (expected each key once; keep one)")
        }
        let reader = ProfileReader(refuse: refuse)
        try reader.allow(object, ["name", "tables"], at: "$")
        guard let name = object["name"] as? String, !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw refuse("$.name: expected the source's name, letters, digits, - and _ (as `sources` will list it)")
        }
        if let known = named(name) {
            throw refuse("$.name: \"\(name)\" is a source this StationAdmin knows (expected another name, or --source \(known.name) without a profile)")
        }
        let tables = try reader.members(object["tables"], at: "$.tables")
        var rules: [String: TableRule] = [:]
        for (tableName, value) in tables.sorted(by: { $0.key < $1.key }) {
            guard let table = declared.table(named: tableName) else {
                throw refuse("$.tables.\(tableName): not a table of the master (expected one of: \(declared.tables.map(\.name).joined(separator: ", ")))")
            }
            rules[tableName] = try reader.rule(value, for: table, at: "$.tables.\(tableName)")
        }
        return SourceProfile(name: name, tables: rules)
    }
}

/// The checks of a profile file's parts, each naming the key's path on refusal.
private struct ProfileReader {
    let refuse: (String) -> InputError

    func allow(_ object: [String: Any], _ keys: [String], at path: String) throws {
        if let other = object.keys.sorted().first(where: { !keys.contains($0) }) {
            throw refuse("\(path).\(other): not a key of a source profile (expected: \(keys.joined(separator: ", ")); e.g. \(SourceProfile.fileExample))")
        }
    }

    func members(_ value: Any?, at path: String) throws -> [String: Any] {
        guard let object = value as? [String: Any] else { throw refuse("\(path): expected an object (e.g. \(SourceProfile.fileExample))") }
        return object
    }

    func column(_ name: String, of table: MasterTable, at path: String) throws -> MasterTable.Column {
        guard let column = table.column(named: name) else {
            throw refuse("\(path): \"\(name)\" is not a column of \(table.name) (expected one of: \(table.columnNames.joined(separator: ", ")))")
        }
        return column
    }

    func rule(_ value: Any, for table: MasterTable, at path: String) throws -> SourceProfile.TableRule {
        let object = try members(value, at: path)
        try allow(object, ["ignored", "values", "normalized", "pairs"], at: path)
        var ignored: Set<String> = []
        if let list = object["ignored"] {
            guard let names = list as? [String] else { throw refuse("\(path).ignored: expected a list of the source's column names") }
            for name in names where table.column(named: name) != nil {
                throw refuse("\(path).ignored: \"\(name)\" is a column of \(table.name), so it is read (expected only columns the master does not have)")
            }
            ignored = Set(names)
        }
        var values: [String: [String: String]] = [:]
        for (name, map) in try members(object["values"] ?? [String: Any](), at: "\(path).values") {
            _ = try column(name, of: table, at: "\(path).values")
            guard let pairs = map as? [String: String] else {
                throw refuse("\(path).values.\(name): expected an object of a published value and the master's value, both strings (e.g. {\"3\": \"0\"})")
            }
            values[name] = pairs
        }
        var normalized: [String: SourceProfile.Normalization] = [:]
        for (name, rule) in try members(object["normalized"] ?? [String: Any](), at: "\(path).normalized") {
            guard try column(name, of: table, at: "\(path).normalized").kind == .text else {
                throw refuse("\(path).normalized.\(name): only a text column is normalized")
            }
            if let word = rule as? String, word == "without-prefecture-name" {
                normalized[name] = .withoutPrefectureName
            } else if let leading = rule as? [String: String], leading.count == 1, let prefix = leading["without-leading"], !prefix.isEmpty {
                normalized[name] = .withoutLeading(prefix)
            } else {
                throw refuse("\(path).normalized.\(name): expected \"without-prefecture-name\" or {\"without-leading\": \"#\"}")
            }
        }
        var pairs: SourceProfile.StationPairs?
        if let word = object["pairs"] {
            guard table.name == MasterTable.connections.name, let found = (word as? String).flatMap(SourceProfile.StationPairs.init(rawValue:)) else {
                throw refuse("\(path).pairs: expected \"\(SourceProfile.StationPairs.onOneLine.rawValue)\", and only for connections")
            }
            pairs = found
        }
        return SourceProfile.TableRule(ignored: ignored, values: values, pairs: pairs, normalized: normalized)
    }
}
