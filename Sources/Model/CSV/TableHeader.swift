import StationSchema
import StationSupport

/// What a CSV file's header says: which master table it holds, and which column each field is.
///
/// ekidata names files by date (`station20210312free.csv`), so the table is recognised by
/// its header: the table whose key columns all appear and whose columns cover the most names.
package struct TableHeader {
    package let table: MasterTable
    /// For each field position, the column it holds.
    package let columns: [MasterTable.Column]

    /// The header `fields` of `file`, read as the tables `declared` declares them.
    package init(fields: [String], file: String, _ declared: DeclaredSchema) throws {
        let names = fields.map { Self.trimmingBlanks($0).lowercased() }
        guard let table = Self.table(named: names, declared) else {
            throw InputError(.csv, file: file, line: 1,
                message: "unknown header \(fields.joined(separator: ",").quotedForMessage()) (expected an ekidata header: "
                    + declared.tables.map { $0.columns.filter(\.isInCSV).map(\.name).joined(separator: ",") }
                        .map { "\"\($0)\"" }.joined(separator: " or ") + ")")
        }
        var columns: [MasterTable.Column] = []
        for (position, name) in names.enumerated() {
            guard let column = table.column(named: table.headerAliases[name] ?? name) else {
                throw InputError(.csv, file: file, line: 1,
                    message: "unknown column \(fields[position].quotedForMessage()) in field \(position + 1) of a \(table.name) header "
                        + "(expected one of: \(table.columnNames.joined(separator: ", ")))")
            }
            if columns.contains(column) {
                throw InputError(.csv, file: file, line: 1, message: "column \"\(column.name)\" appears twice in the header")
            }
            columns.append(column)
        }
        for key in table.keyColumns where !columns.contains(where: { $0.name == key }) {
            throw InputError(.csv, file: file, line: 1,
                message: "missing key column \"\(key)\" in a \(table.name) header (expected: \(table.keyColumns.joined(separator: ", ")))")
        }
        for column in table.columns where column.isInCSV && !columns.contains(column) {
            throw InputError(.csv, file: file, line: 1,
                message: "missing column \"\(column.name)\" in a \(table.name) header (expected all of: "
                    + table.columns.filter(\.isInCSV).map(\.name).joined(separator: ", ") + ")")
        }
        self.table = table
        self.columns = columns
    }
}

extension TableHeader {
    /// The table whose columns cover the most of a header's `names` (trimmed, lower case); nil
    /// when none covers any.
    package static func table(named names: [String], _ declared: DeclaredSchema) -> MasterTable? {
        let candidates = declared.tables.map { table -> (MasterTable, Int) in
            let known = names.filter { table.column(named: table.headerAliases[$0] ?? $0) != nil }
            return (table, Set(known).count)
        }
        guard let (table, overlap) = candidates.max(by: { $0.1 < $1.1 }), overlap > 0 else { return nil }
        return table
    }

    /// What `trimmingCharacters(in: .whitespaces)` gives (tabs, Unicode space separators and,
    /// as Foundation has it, the zero-width space off both ends), without Foundation's bridging
    /// of every header field. HeaderReadingTests compares the two sets
    /// over every Unicode scalar.
    package static func trimmingBlanks(_ text: String) -> String {
        func isBlank(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "\t" || scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
        }
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isBlank($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !isBlank($0) })!
        return String(scalars[first...last])
    }
}
