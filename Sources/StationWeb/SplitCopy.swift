import PostgresNIO
import StationClientCore

/// A split carried out in one of the web service's tables of users' records: every user's rows of
/// the old station copied to the new one, never over a row the user already has there, with the
/// `updated_at` column (when there is one) set to now, so that the timestamp sync sends the copy
/// to the user's phones (DOMAIN.md, "The web service").
struct SplitCopy: Sendable {
    let table: UserTable
    /// The columns an insert writes (not identity, serial or generated ones), with their types.
    let columns: [(name: String, type: String)]

    /// Where the users whose records a split copied are listed, for the operator's SQL.
    static let usersTable = "station_split_users"

    static func createUsersTable(_ server: ServerSession) async throws {
        try await server.run("listing the users splits copied for", """
            CREATE TEMP TABLE \(usersTable) (table_name text NOT NULL, user_id text NOT NULL, PRIMARY KEY (table_name, user_id)) ON COMMIT DROP
            """)
    }

    static func usersAffected(_ server: ServerSession) async throws -> Int {
        try await server.rows("counting the users splits copied for", "SELECT count(DISTINCT user_id) FROM \(usersTable)")[0].decode(Int.self)
    }

    /// The table's columns, checked: it exists, with the user and station columns named.
    static func columns(of table: UserTable, _ server: ServerSession) async throws -> SplitCopy {
        let (schema, name) = table.schemaAndName
        var binds = PostgresBindings()
        binds.append(schema)
        binds.append(name)
        let rows = try await server.rows("reading user table \(table.table)", PostgresQuery(unsafeSQL: """
            SELECT column_name::text, data_type::text,
                   (is_identity = 'YES' OR is_generated <> 'NEVER' OR coalesce(column_default, '') LIKE 'nextval(%') AS automatic
            FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position
            """, binds: binds))
        guard !rows.isEmpty else { throw PostgresSyncError.missingUserTable(table: table.table) }
        var columns: [(String, String)] = []
        var all: Set<String> = []
        for row in rows {
            let (column, type, automatic) = try row.decode((String, String, Bool).self)
            all.insert(column)
            if !automatic { columns.append((column, type)) }
        }
        for needed in [table.userColumn, table.stationColumn] where !all.contains(needed) {
            throw PostgresSyncError.missingUserColumn(table: table.table, column: needed)
        }
        return SplitCopy(table: table, columns: columns)
    }

    /// Copies `split` for every user; returns the rows copied.
    func copy(_ split: ReleaseSplit, _ server: ServerSession) async throws -> Int {
        let (user, station) = (table.userColumn, table.stationColumn)
        // The table `columns(of:)` checked, by the same schema, whatever the role's search path.
        let (schema, name) = table.schemaAndName
        let qualified = "\(schema).\(name)"
        let values = columns.map { column -> String in
            if column.name == station { return "\(split.new)" }
            if column.name == "updated_at", let now = Self.now(as: column.type) { return now }
            return "o.\(column.name)"
        }
        let rows = try await server.rows("copying split \(split.old) → \(split.new) in \(table.table)", """
            WITH copied AS (
                INSERT INTO \(qualified) (\(columns.map(\.name).joined(separator: ", ")))
                SELECT \(values.joined(separator: ", ")) FROM \(qualified) o
                WHERE o.\(station) = \(split.old)
                  AND NOT EXISTS (SELECT 1 FROM \(qualified) h WHERE h.\(user) = o.\(user) AND h.\(station) = \(split.new))
                RETURNING \(user)),
            noted AS (INSERT INTO \(Self.usersTable) (table_name, user_id) SELECT DISTINCT '\(table.table)', \(user)::text FROM copied
                      ON CONFLICT DO NOTHING)
            SELECT count(*) FROM copied
            """)
        return try rows[0].decode(Int.self)
    }

    /// Now, in the column's own type: an instant, seconds since 1970, or ISO 8601 UTC text.
    static func now(as type: String) -> String? {
        switch type {
        case "timestamp with time zone", "timestamp without time zone": return "now()"
        case "bigint", "integer": return "extract(epoch from now())::bigint"
        case "double precision", "real", "numeric": return "extract(epoch from now())"
        case "text", "character varying": return "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
        default: return nil
        }
    }
}
