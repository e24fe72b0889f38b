import GRDBSQLite

/// Every station of the master as it was before a version, as much of each as `KeyScan` needs:
/// kept by an import's compare, which reads every station in code order anyway
/// (`StreamingTableDiff`), so that the split suggestions need no second scan of a million rows.
///
/// 24 bytes and two `Float`s a station (32 MB for a million): a name is kept as its hash and a
/// place in single precision, so what `KeyScan.keys(in:)` finds holds every station the scan of
/// the table would, and at most a few more, which the suggestions compare again exactly.
package struct StationPlaces: Sendable {
    struct Entry: Sendable {
        let code: Int64
        /// `station_g_cd`, or the code where it has none: the group is looked up by code too.
        let group: Int64
        let nameHash: UInt64
        /// NaN where the station has no place.
        let latitude: Float, longitude: Float
    }

    /// In code order.
    private(set) var entries: [Entry] = []

    /// Where a row of the stations table holds the columns kept.
    package struct Columns: Sendable {
        let code: Int32, group: Int32, name: Int32, latitude: Int32, longitude: Int32

        /// The columns in a statement that selects `columnNames`, in their order.
        package init(in columnNames: [String]) {
            func index(_ name: String) -> Int32 { Int32(columnNames.firstIndex(of: name)!) }
            (code, group, name, latitude, longitude) = (index("station_cd"), index("station_g_cd"), index("station_name"), index("lat"), index("lon"))
        }
    }

    /// Room for `expected` stations, so that a million are not copied as the list grows.
    package init(expected: Int) {
        entries.reserveCapacity(expected)
    }

    /// The station on `row`, a statement stepped onto it; stations must come in code order.
    /// Each column is read once, as `sqlite3_column_value` (one pass of the connection's mutex,
    /// not one for its type and another for its value), on the statement's own thread.
    package mutating func append(_ row: OpaquePointer, _ columns: Columns) {
        let code = sqlite3_value_int64(sqlite3_column_value(row, columns.code))
        let storedGroup = sqlite3_column_value(row, columns.group)
        let group = sqlite3_value_type(storedGroup) == SQLITE_NULL ? code : sqlite3_value_int64(storedGroup)
        var nameHash = KeyScan.emptyNameHash
        let name = sqlite3_column_value(row, columns.name)
        if let text = sqlite3_value_text(name) {
            nameHash = KeyScan.hash(UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(name))))
        }
        func coordinate(_ column: Int32) -> Float {
            let value = sqlite3_column_value(row, column)
            return sqlite3_value_type(value) == SQLITE_NULL ? .nan : Float(sqlite3_value_double(value))
        }
        entries.append(Entry(code: code, group: group, nameHash: nameHash,
                             latitude: coordinate(columns.latitude), longitude: coordinate(columns.longitude)))
    }
}
