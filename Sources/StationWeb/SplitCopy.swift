import PostgresNIO
import StationClientCore
import StationManifest

/// A split carried out in one of the web service's tables of users' records: every user's rows of
/// the old station copied to the new one, never over a row the user already has there, with the
/// bookkeeping columns (updated time, created time, when the table has them) set to the copy's
/// time, so that the timestamp sync sends the copy to the user's phones (DOMAIN.md, "The web
/// service"); the record's own data (its date, memo, …) is copied.
///
/// The copy writes the user, the station and the record's own data; a column the table fills
/// itself (identity, generated, a sequence, or a key or unique column with a default, such as a
/// `uuid` key with `DEFAULT gen_random_uuid()`) is left to its default. Names come from the
/// catalog and are quoted by the server (`quote_ident`), so camelCase, reserved words and
/// non-ASCII names work as the framework made them.
struct SplitCopy: Sendable {
    let table: UserTable
    /// The table, schema-qualified and quoted.
    let qualified: String
    /// The columns an insert writes, quoted, with their types and whether each is the updated time.
    let columns: [Column]
    let user: String
    let station: String

    struct Column: Sendable {
        let name: String
        let quoted: String
        let type: String
        /// The updated-time or created-time column, set to the copy's time.
        let isBookkeeping: Bool
    }

    /// What one split's copy did in the table.
    struct Outcome: Sendable, Equatable {
        /// Rows copied to the new station.
        var copied: Int
        /// Rows that were to be copied but that a record the app made meanwhile (committed while
        /// the sync waited on it) already stood for: left as the app made it.
        var skipped: Int
    }

    /// How many users of the table have records at a split's old station, and how many of them at
    /// its new station too: what a `--baseline` is weighed with.
    struct Weight: Sendable, Equatable {
        var withOld: Int
        var withBoth: Int
    }

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

    /// The table's columns from the catalog (which lists them whatever the role may read), checked:
    /// it exists, with the user and station columns named, and bookkeeping columns of a type the
    /// copy can set (a created column of another type is copied as data). Both names are matched
    /// ignoring case and underscores (`updated_at` finds `updatedAt`).
    static func columns(of table: UserTable, updatedColumn: String, createdColumn: String, _ server: ServerSession) async throws -> SplitCopy {
        var binds = PostgresBindings()
        binds.append(table.schema)
        binds.append(table.name)
        let rows = try await server.rows("reading user table \(table.table)", PostgresQuery(unsafeSQL: """
            SELECT a.attname::text, quote_ident(a.attname), a.atttypid::regtype::text,
                   (a.attidentity <> '' OR a.attgenerated <> ''
                    OR coalesce(pg_get_expr(d.adbin, d.adrelid), '') LIKE 'nextval(%'
                    OR (a.atthasdef AND EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisunique AND a.attnum = ANY (i.indkey)))),
                   quote_ident(n.nspname) || '.' || quote_ident(c.relname)
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
            WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p')
            ORDER BY a.attnum
            """, binds: binds))
        guard !rows.isEmpty else {
            throw PostgresSyncError.missingUserTable(table: table.table, asWritten: try await inAnotherCase(table, server))
        }
        let folded = { (name: String) in name.lowercased().replacingOccurrences(of: "_", with: "") }
        var columns: [Column] = [], quotedNames: [String: String] = [:], qualified = ""
        for row in rows {
            let (name, quoted, type, automatic, table) = try row.decode((String, String, String, Bool, String).self)
            quotedNames[name] = quoted
            qualified = table
            let isUpdated = folded(name) == folded(updatedColumn), settable = Self.time(as: type) != nil
            if isUpdated && !settable { throw PostgresSyncError.badUpdatedColumn(table: table, column: name, type: type) }
            // A created column that cannot hold an instant (a `date`) is the record's data, copied as it is.
            let isBookkeeping = isUpdated || (folded(name) == folded(createdColumn) && settable)
            if !automatic { columns.append(Column(name: name, quoted: quoted, type: type, isBookkeeping: isBookkeeping)) }
        }
        for needed in [table.userColumn, table.stationColumn] where quotedNames[needed] == nil {
            throw PostgresSyncError.missingUserColumn(table: table.table, column: needed)
        }
        return SplitCopy(table: table, qualified: qualified, columns: columns, user: quotedNames[table.userColumn]!, station: quotedNames[table.stationColumn]!)
    }

    /// The `--user-table` argument that names `table` as the catalog has it when it exists only in
    /// another case (`Checkins:userId` for a table `"Checkins"`), each column as the catalog has it
    /// too; nil when no such table, or more than one, exists.
    private static func inAnotherCase(_ table: UserTable, _ server: ServerSession) async throws -> String? {
        var binds = PostgresBindings()
        binds.append(table.schema)
        binds.append(table.name)
        binds.append(table.userColumn)
        binds.append(table.stationColumn)
        let rows = try await server.rows("looking for user table \(table.table) in another case", PostgresQuery(unsafeSQL: """
            SELECT quote_ident(c.relname),
                   (SELECT quote_ident(a.attname) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND lower(a.attname) = lower($3)),
                   (SELECT quote_ident(a.attname) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND lower(a.attname) = lower($4))
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = $1 AND lower(c.relname) = lower($2) AND c.relkind IN ('r', 'p')
            """, binds: binds))
        guard rows.count == 1 else { return nil }
        let (name, user, station) = try rows[0].decode((String, String?, String?).self)
        let schema = table.schema == "public" ? "" : "\(table.schema)."
        let columns = [user ?? table.userColumn] + (table.stationColumn == UserTable.completions.stationColumn && station == table.stationColumn ? [] : [station ?? table.stationColumn])
        return "'" + ([schema + name] + columns).joined(separator: ":") + "'"
    }

    /// Copies `split` for every user, the bookkeeping columns set to `time` (microseconds since
    /// 1970, UTC: one instant for every table and column kind).
    func copy(_ split: ReleaseSplit, at time: Int64, _ server: ServerSession) async throws -> Outcome {
        try await copy(old: split.old, new: split.new, at: time, step: "copying split \(split.old) → \(split.new) in \(table.table)", server)
    }

    /// Runs the copy for a split no row matches: a table that could not take a split (a missing
    /// privilege, a column the copy cannot write) fails now, on every run and `--dry-run`, not on
    /// the day the first split arrives.
    func probe(_ server: ServerSession) async throws {
        _ = try await copy(old: -1, new: -2, at: 0, step: "checking that splits can be copied in \(table.table)", server)
    }

    /// The users with records at `split.old`, and those of them with records at `split.new` too.
    func weigh(_ split: ReleaseSplit, _ server: ServerSession) async throws -> Weight {
        var binds = PostgresBindings()
        binds.append(split.old)
        binds.append(split.new)
        let rows = try await server.rows("weighing --baseline against split \(split.old) → \(split.new) in \(table.table)", PostgresQuery(unsafeSQL: """
            SELECT count(DISTINCT o.\(user)),
                   count(DISTINCT o.\(user)) FILTER (WHERE EXISTS (SELECT 1 FROM \(qualified) h WHERE h.\(user) = o.\(user) AND h.\(station) = $2))
            FROM \(qualified) o WHERE o.\(station) = $1
            """, binds: binds))
        let (withOld, withBoth) = try rows[0].decode((Int, Int).self)
        return Weight(withOld: withOld, withBoth: withBoth)
    }

    private func copy(old: Int64, new: Int64, at time: Int64, step: String, _ server: ServerSession) async throws -> Outcome {
        let values = columns.map { column -> String in
            if column.name == table.stationColumn { return "$2" }
            if column.isBookkeeping, let time = Self.time(as: column.type) { return time }
            return "o.\(column.quoted)"
        }
        var binds = PostgresBindings()
        binds.append(old)
        binds.append(new)
        binds.append(table.table)
        binds.append(time)
        let rows = try await server.rows(step, PostgresQuery(unsafeSQL: """
            WITH wanted AS MATERIALIZED (
                SELECT \(values.joined(separator: ", ")) FROM \(qualified) o
                WHERE o.\(station) = $1
                  AND NOT EXISTS (SELECT 1 FROM \(qualified) h WHERE h.\(user) = o.\(user) AND h.\(station) = $2)),
            copied AS (
                INSERT INTO \(qualified) (\(columns.map(\.quoted).joined(separator: ", "))) SELECT * FROM wanted
                -- A record the app made meanwhile (a phone uploading the same copy) is left as the app made it.
                ON CONFLICT DO NOTHING
                RETURNING \(user)),
            noted AS (INSERT INTO \(Self.usersTable) (table_name, user_id) SELECT DISTINCT $3, \(user)::text FROM copied
                      ON CONFLICT DO NOTHING)
            SELECT (SELECT count(*) FROM copied), (SELECT count(*) FROM wanted)
            """, binds: binds))
        let (copied, wanted) = try rows[0].decode((Int, Int).self)
        return Outcome(copied: copied, skipped: wanted - copied)
    }

    /// The copy's time (`$4`, microseconds since 1970) in the column's own type, the same instant
    /// whatever the session's TimeZone: an instant, UTC for a timestamp without time zone (what
    /// Rails and Prisma store), seconds since 1970, or ISO 8601 UTC text.
    static func time(as type: String) -> String? {
        let instant = "('epoch'::timestamptz + $4::bigint * interval '1 microsecond')"
        switch type {
        case "timestamp with time zone": return instant
        case "timestamp without time zone": return "(\(instant) AT TIME ZONE 'UTC')"
        case "bigint", "integer": return "($4::bigint / 1000000)"
        case "double precision", "real", "numeric": return "($4::bigint / 1e6)"
        case "text", "character varying": return "to_char(\(instant) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
        default: return nil
        }
    }

    /// The instant the copies are stamped with, in microseconds since 1970: the server's clock as
    /// late as the transaction allows (after the lock and the master tables, just before the
    /// splits, the operator's SQL and COMMIT), not the transaction's start.
    static func copyTime(_ server: ServerSession) async throws -> Int64 {
        try await server.rows("reading the server's clock", "SELECT (extract(epoch from clock_timestamp()) * 1000000)::bigint")[0].decode(Int64.self)
    }
}
