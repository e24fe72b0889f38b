import GRDB

/// Keys an object of a JSON text names more than once (a plan's line, a source profile).
/// `JSONDecoder` keeps the first value and `jq` or Python the last, so such a text would apply
/// one value while a reviewer reads another.
/// SQLite's JSON parser keeps every member as written (`json_tree`), so it finds them.
package struct JSONDuplicateKeys {
    private let queue: DatabaseQueue

    package init() throws {
        queue = try DatabaseQueue(configuration: SQLiteDefences.configuration())
    }

    /// The first key named twice in one object of `line` (a JSON text), with that object's path (`$.set`).
    package func first(in line: String) throws -> (key: String, object: String)? {
        try queue.read { db in
            try Row.fetchOne(db, sql: """
                SELECT member.key, parent.fullkey FROM json_tree(?) AS member JOIN json_tree(?) AS parent ON parent.id = member.parent
                WHERE typeof(member.key) = 'text' GROUP BY member.parent, member.key HAVING count(*) > 1 ORDER BY min(member.id) LIMIT 1
                """, arguments: [line, line]).map { ($0[0], $0[1]) }
        }
    }
}
