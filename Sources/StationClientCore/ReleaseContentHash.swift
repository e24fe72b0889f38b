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
    /// The hash of `main`'s release tables, with the columns and key the release attached as
    /// `releaseSchema` gives each.
    package static func compute(_ db: Database, columnsFrom releaseSchema: String) throws -> String {
        var hasher = SHA256()
        for table in ReleaseContent.hashedTables {
            hasher.update(data: Data("table:\(table)\n".utf8))
            let info = try Row.fetchAll(db, sql: "SELECT name, pk FROM pragma_table_info(?, ?) ORDER BY cid", arguments: [table, releaseSchema])
            guard !info.isEmpty else { continue }
            let columns = info.map { ($0["name"] as String).quotedDatabaseIdentifier }
            let key = info.filter { ($0["pk"] as Int) > 0 }.sorted { ($0["pk"] as Int) < ($1["pk"] as Int) }
                .map { ($0["name"] as String).quotedDatabaseIdentifier }
            let rendered = columns.map { column in
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
