/// SQL expressions that render a column's value as an exact SQL literal, by SQLite itself.
///
/// `quote()` renders integers, reals (round-trip exact), blobs and text with quotes,
/// newlines and emoji; but up to SQLite 3.40 it cuts text at a NUL byte, so such
/// text is rendered from its bytes: `'a' || char(0) || 'b'` becomes `CAST(X'610062' AS TEXT)`,
/// which every SQLite since 3.0 reads back byte for byte.
enum SQLLiteral {
    static func render(_ column: String) -> String {
        "(CASE WHEN typeof(\(column)) = 'text' AND instr(CAST(\(column) AS BLOB), x'00') > 0 "
            + "THEN 'CAST(' || quote(CAST(\(column) AS BLOB)) || ' AS TEXT)' ELSE quote(\(column)) END)"
    }

    /// A rendering for hashing: type and exact bytes, never cut (`text:E585AB`, `integer:3`).
    static func canonical(_ column: String) -> String {
        "(typeof(\(column)) || ':' || CASE typeof(\(column)) WHEN 'text' THEN hex(CAST(\(column) AS BLOB)) "
            + "WHEN 'blob' THEN hex(\(column)) ELSE quote(\(column)) END)"
    }
}
