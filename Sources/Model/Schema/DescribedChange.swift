import GRDB

/// One changed row in words.
public struct DescribedChange: Codable, Sendable, Equatable {
    /// The master table of the row.
    public var table: String
    /// The row's key as in `updates.key_id`; for a split, `old → new`.
    public var key: String
    /// What the change did.
    public var kind: Update.Kind
    /// The row's name (`station_name`, `line_name`, …) after the change.
    public var name: String?
    /// For UPDATE, DELETE and RESTORE: the columns that changed, old → new;
    /// for INSERT: the new row's non-NULL columns.
    public var fields: [FieldChange]

    package init(table: String, key: String, kind: Update.Kind, name: String?, fields: [FieldChange]) {
        self.table = table
        self.key = key
        self.kind = kind
        self.name = name
        self.fields = fields
    }

    package enum CodingKeys: String, CodingKey {
        case table, key, kind, name, fields
    }

    /// Every key (`name` null when the row has none), and the values typed as their column:
    /// numbers for codes and coordinates, text for text, null for NULL.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(table, forKey: .table)
        try container.encode(key, forKey: .key)
        try container.encode(kind, forKey: .kind)
        try container.encode(name, forKey: .name)
        try container.encode(typedFields, forKey: .fields)
    }

    /// The fields as JSON gives them: numbers for codes and coordinates (`e_status` 2, not "2"),
    /// by the kinds the shipped schema declares (`Encodable` takes no schema; a column only a
    /// test declares is given as text).
    package var typedFields: [some Encodable] {
        let columns = DeclaredSchema.shipped.table(named: table)
        return fields.map { TypedFieldChange(change: $0, kind: columns?.column(named: $0.column)?.kind) }
    }

    /// `stations 1122903 佐貫 UPDATE: station_name 佐貫 → 龍ケ崎市`
    public var summary: String {
        var text = "\(kind.rawValue) \(table) \(key)"
        if let name { text += " \(name)" }
        if kind == .insert && !fields.isEmpty {
            text += ": " + fields.map { "\($0.column)=\($0.new ?? "NULL")" }.joined(separator: ", ")
        } else if !fields.isEmpty {
            text += ": " + fields.map { "\($0.column) \($0.old ?? "NULL") → \($0.new ?? "NULL")" }.joined(separator: ", ")
        }
        return text
    }
}

/// One column of a changed row: its value before and after, as text (NULL as nil).
public struct FieldChange: Codable, Sendable, Equatable {
    /// The column.
    public var column: String
    /// Its value before; nil for NULL or a new row.
    public var old: String?
    /// Its value after; nil for NULL or a removed row.
    public var new: String?

    package init(column: String, old: String?, new: String?) {
        self.column = column
        self.old = old
        self.new = new
    }

    /// Every key; NULL as null.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(column, forKey: .column)
        try container.encode(old, forKey: .old)
        try container.encode(new, forKey: .new)
    }
}

extension DescribedChange {
    /// The one description of a row's change, for the import's report, curated commands, `diff`
    /// and `log`: an INSERT lists the new row's non-NULL columns, a change the columns that
    /// differ (coordinates within `MasterTable.isSameCoordinate` do not), a removed row nothing
    /// but its key. `old` and `new` are the row's values in `table.columns` order.
    package init(_ table: MasterTable, key: String, kind: Update.Kind, old: [DatabaseValue]?, new: [DatabaseValue]?) {
        var fields: [FieldChange] = []
        if let new {
            for (index, column) in table.columns.enumerated() {
                if kind == .insert {
                    if !table.keyColumns.contains(column.name), let value = FieldChange.text(new[index]) {
                        fields.append(FieldChange(column: column.name, old: nil, new: value))
                    }
                } else if FieldChange.differ(new[index], old?[index] ?? .null, column.kind) {
                    fields.append(FieldChange(column: column.name, old: old.flatMap { FieldChange.text($0[index]) }, new: FieldChange.text(new[index])))
                }
            }
        }
        let nameIndex = table.columns.firstIndex { $0.name.hasSuffix("_name") }
        self.init(table: table.name, key: key, kind: kind, name: nameIndex.flatMap { index in (new ?? old).flatMap { FieldChange.text($0[index]) } },
                  fields: fields)
    }
}

extension FieldChange {
    /// Whether two stored values of a column differ under the diff rules: coordinates are
    /// equal within `MasterTable.coordinateTolerance`, text byte for byte (as SQLite compares it,
    /// not by Unicode equivalence).
    package static func differ(_ new: DatabaseValue, _ old: DatabaseValue, _ kind: MasterTable.ColumnKind) -> Bool {
        switch (kind, new.storage, old.storage) {
        case (.coordinate, _, _), (.real, _, _):
            guard let a = Double.fromDatabaseValue(new), let b = Double.fromDatabaseValue(old) else {
                return new.isNull != old.isNull
            }
            return !MasterTable.isSameCoordinate(a, b)
        case let (_, .string(a), .string(b)):
            return !a.utf8.elementsEqual(b.utf8)
        default:
            return new != old
        }
    }

    /// A stored value as the change report shows it (a blob by its size).
    package static func text(_ value: DatabaseValue) -> String? {
        switch value.storage {
        case .null: return nil
        case .int64(let number): return String(number)
        case .double(let number): return String(number)
        case .string(let string): return string
        case .blob(let data): return "<\(data.count) bytes>"
        }
    }
}

/// A `FieldChange` as JSON: its values as numbers where the column holds numbers.
package struct TypedFieldChange: Encodable {
    package let change: FieldChange
    package let kind: MasterTable.ColumnKind?

    package enum CodingKeys: String, CodingKey { case column, old, new }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(change.column, forKey: .column)
        try encode(change.old, .old, &container)
        try encode(change.new, .new, &container)
    }

    private func encode(_ text: String?, _ key: CodingKeys, _ container: inout KeyedEncodingContainer<CodingKeys>) throws {
        guard let text else { return try container.encodeNil(forKey: key) }
        switch kind {
        case .integer?:
            if let number = Int64(text) { return try container.encode(number, forKey: key) }
        case .coordinate?, .real?:
            if let number = Double(text) { return try container.encode(number, forKey: key) }
        default: break
        }
        try container.encode(text, forKey: key)
    }
}
