/// Each column's domain as SQL, for the master's `CHECK` constraints: the same rules the CSV
/// reader and every curated write apply in Swift, so that a value the code lets through by
/// mistake still never reaches the master, its history or a phone.
extension MasterTable.IntegerDomain {
    /// The values, as ranges; `contains` is the same set as a plain switch (the CSV reader
    /// calls it for every field), and `MasterSchemaTests` holds the two equal.
    public var ranges: [ClosedRange<Int64>] {
        switch self {
        case .code: return [1...Int64(Int32.max)]
        case .status: return [Int64(MasterTable.openStatus)...Int64(MasterTable.closedStatus)]
        case .prefecture: return [1...47]
        case .prefectureRow: return [1...47, 99...99]
        case .weight:
            return [Int64(MapWeight.handAssigned.lowerBound)...Int64(MapWeight.handAssigned.upperBound),
                    Int64(MapWeight.firstOrderSample)...Int64(MapWeight.unsampled)]
        }
    }

    /// `column BETWEEN 1 AND 9 OR column BETWEEN 11 AND 13`: comparisons, not `IN`, which
    /// SQLite evaluates in a CHECK by building a table for every row.
    package func sqlCondition(_ column: String) -> String {
        ranges.map { $0.lowerBound == $0.upperBound ? "\(column) = \($0.lowerBound)" : "\(column) BETWEEN \($0.lowerBound) AND \($0.upperBound)" }
            .joined(separator: " OR ")
    }
}

extension MasterTable.Column {
    /// SQL that holds for a value in the column's domain, NULL aside (a CHECK lets NULL through:
    /// `NOT NULL` says whether the column takes it); nil for a column that takes any value.
    public var domainCheck: String? {
        var conditions: [String] = []
        switch kind {
        case .integer:
            if let domain { conditions.append(domain.sqlCondition(name)) }
        case .coordinate(let range):
            conditions.append("\(name) BETWEEN \(range.lowerBound) AND \(range.upperBound)")
        case .real:
            break
        case .text:
            if isRequired { conditions.append("\(name) <> ''") }
            if let textLimit { conditions.append("length(CAST(\(name) AS BLOB)) <= \(textLimit.rawValue)") }
        case .date:
            // date(…, '+0 days') gives the text back only for a real day written YYYY-MM-DD (NULL,
            // or the day normalised: 2021-02-30 is 2021-03-02, 2021-3-1 is NULL, a time is cut);
            // `IS`, so that NULL fails. (Without a modifier date() returns 2021-02-30 as it is.)
            conditions.append("date(\(name), '+0 days') IS \(name) AND \(name) >= '0001-01-01'")
        }
        if conditions.count == 1 { return conditions[0] }
        return conditions.isEmpty ? nil : conditions.map { $0.contains(" OR ") ? "(\($0))" : $0 }.joined(separator: " AND ")
    }
}

extension MasterTable.Column {
    /// How a message names the domain: "a map weight: 1 to 9 by hand, …".
    public var domainExpectation: String {
        switch kind {
        case .integer: return domain?.expectation ?? "a whole number"
        case .coordinate(let range): return "degrees from \(range.lowerBound) to \(range.upperBound)"
        case .real: return "a number"
        case .text:
            return (isRequired ? "a non-empty text" : "a text") + (textLimit.map { " of at most \($0.rawValue) bytes" } ?? "")
        case .date: return "a date YYYY-MM-DD"
        }
    }
}

extension MasterTable {
    /// The master table's `CREATE TABLE` as the declaration gives it, with each column's domain
    /// as a CHECK. The migrations spell it out frozen; `MasterSchemaTests` holds them equal.
    package func createStatement(named tableName: String? = nil) -> String {
        var lines = columns.map { column in
            var line = "    \(column.name) \(column.sqlType)"
            let isRowID = keyColumns == [column.name] && column.kind == .integer
            if isRowID { line += " PRIMARY KEY" }
            if !isRowID && (column.isRequired || column.defaultValue != nil) { line += " NOT NULL" }
            if let value = column.defaultValue { line += " DEFAULT \(value)" }
            if let check = column.domainCheck { line += " CHECK (\(check))" }
            return line
        }
        if keyColumns.count > 1 { lines.append("    PRIMARY KEY (\(keyColumns.joined(separator: ", ")))") }
        return "CREATE TABLE \(tableName ?? name) (\n" + lines.joined(separator: ",\n") + "\n)" + (keyColumns.count > 1 ? " WITHOUT ROWID" : "")
    }
}
