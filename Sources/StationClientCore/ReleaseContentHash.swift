import Crypto
import Foundation
import GRDB
import StationManifest

/// The content hash of the release tables as a phone installed them (`ReleaseContent`'s
/// definition), so that an install commits only the content the manifest signed: the file that
/// was checked by its SHA-256 and the file that was attached are then one, whatever happened to
/// the path in between.
///
/// Each value is rendered by SQLite itself; the columns are the release's (its client schema's,
/// in order), read from the tables in `main`, where an app may keep columns of its own.
package enum ReleaseContentHash {
    /// The hash of `main`'s release tables, with the columns the release attached as
    /// `releaseSchema` has (the full and bundled paths).
    package static func compute(_ db: Database, columnsFrom releaseSchema: String) throws -> String {
        var columns: [String: [String]] = [:]
        for table in ReleaseContent.hashedTables {
            columns[table] = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?, ?) ORDER BY cid", arguments: [table, releaseSchema])
        }
        return try compute(db, columns: columns)
    }

    /// The hash of `main`'s release tables, with the columns a version's signed `content_columns`
    /// lists (the delta path: `main` holds the release's tables and whatever columns an app added
    /// to them). A manifest of format 6 or older lists none: every column of `main`'s is hashed.
    ///
    /// - Throws: `StationClientError.contentDiffers` when `main` lacks a listed column.
    package static func compute(_ db: Database, listed: [String: [String]]?, version: Int, expected: String) throws -> String {
        guard let listed else { return try compute(db, columnsFrom: "main") }
        for (table, columns) in listed where ReleaseContent.hashedTables.contains(table) {
            let present = Set(try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?, 'main')", arguments: [table]))
            if let missing = columns.first(where: { !present.contains($0) }) {
                throw StationClientError.contentDiffers(version: version, expected: expected, actual: "none: the database has no column \(table).\(missing)")
            }
        }
        return try compute(db, columns: listed)
    }

    /// The hash over `columns` of each table in `main`, in key order; a table listed with no
    /// columns (or not listed) adds only its name line.
    private static func compute(_ db: Database, columns: [String: [String]]) throws -> String {
        var hasher = SHA256()
        for table in ReleaseContent.hashedTables {
            hasher.update(data: Data("table:\(table)\n".utf8))
            let names = columns[table] ?? []
            guard !names.isEmpty else { continue }
            let key = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?, 'main') WHERE pk > 0 ORDER BY pk", arguments: [table])
                .map(\.quotedDatabaseIdentifier)
            let rendered = names.map(\.quotedDatabaseIdentifier).map { column in
                "(CASE WHEN typeof(\(column)) = 'text' AND instr(\(column), char(0)) > 0 THEN 'nul-text:' || hex(CAST(\(column) AS BLOB)) ELSE quote(\(column)) END)"
            }.joined(separator: " || ',' || ")
            let order = key.isEmpty ? "" : " ORDER BY \(key.joined(separator: ", "))"
            let lines = try String.fetchCursor(db, sql: "SELECT \(rendered) FROM main.\(table.quotedDatabaseIdentifier)\(order)")
            while let line = try lines.next() {
                hasher.update(data: Data(line.utf8))
                hasher.update(data: Data("\n".utf8))
            }
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
