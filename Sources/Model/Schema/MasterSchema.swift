import GRDB

/// The master database's schema, as frozen migrations.
///
/// Migrations are history: never edit one that has shipped, add another.
/// Each master table has a `<table>_history` table that keeps every superseded row
/// state with the version that superseded it (`valid_to`), so that any past version
/// can be rebuilt (see `VersionedState`).
public enum MasterSchema {
    /// Every migration of the master under `declared`, oldest first; each is frozen once shipped.
    public static func migrator(_ declared: DeclaredSchema) -> DatabaseMigrator {
        migrator(declared, only: nil)
    }

    /// The migrations of `declared` whose identifiers are in `identifiers` (all when nil), in order:
    /// what a master that recorded those made (`MasterSchemaObjects`).
    package static func migrator(_ declared: DeclaredSchema, only identifiers: Set<String>?) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for (identifier, migrate) in frozenMigrations where identifiers?.contains(identifier) ?? true {
            migrator.registerMigration(identifier, migrate: migrate)
        }
        for change in declared.changes where identifiers?.contains(change.id) ?? true {
            migrator.registerMigration(change.id) { db in try change.migrate(db) }
        }
        return migrator
    }

    /// The migrations of the master's own tables, oldest first, each by the identifier GRDB
    /// records in `grdb_migrations`: an identifier, once shipped, names that body forever.
    private static let frozenMigrations: [(String, @Sendable (Database) throws -> Void)] = [
        ("createMasterTables", createTheMasterTables),
        ("stampMaster", stampMaster),
        ("recordVersions", recordVersions),
        ("recordWaivers", recordWaivers),
        ("recordFindings", recordFindings),
        ("updatesTypeCheckByComparison", updatesTypeCheckByComparison),
        ("indexSplits", indexSplits),
        ("recordFindingRules", recordFindingRules),
        ("checkDomains", checkDomains),
        ("recordClientSchemas", recordClientSchemas),
        ("recordFindingsBefore", recordFindingsBefore),
        ("keepVersionCounts", keepVersionCounts),
        ("recordUpstream", recordUpstream),
        ("recordPublishedVersions", recordPublishedVersions),
        ("recordPublishedEntries", recordPublishedEntries),
        ("recordSources", recordSources),
    ]

    private static func createTheMasterTables(_ db: Database) throws {
        try db.execute(sql: createMasterTables)
    }

    private static func stampMaster(_ db: Database) throws {
        try MasterStamp.stamp(db)
    }

    /// Curator data, never published: who committed each version, when, and why.
    private static func recordVersions(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE versions (
                version INTEGER PRIMARY KEY,
                committed_at TEXT NOT NULL,
                author TEXT,
                memo TEXT
            )
            """)
    }

    /// Curator data, never published: findings of `check` a curator accepted, with why.
    private static func recordWaivers(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE waivers (
                rule TEXT NOT NULL,
                table_name TEXT NOT NULL,
                key_id TEXT NOT NULL,
                reason TEXT NOT NULL,
                author TEXT,
                waived_at TEXT NOT NULL,
                PRIMARY KEY (rule, table_name, key_id)
            ) WITHOUT ROWID
            """)
    }

    /// Curator data, never published: the findings of the newest version, so that the next
    /// version's report names what it introduces without rebuilding this one (RecordedFindings).
    private static func recordFindings(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE recorded_findings (
                rule TEXT NOT NULL,
                table_name TEXT NOT NULL,
                key_id TEXT NOT NULL,
                PRIMARY KEY (rule, table_name, key_id)
            ) WITHOUT ROWID;
            CREATE TABLE recorded_findings_version (version INTEGER NOT NULL);
            """)
    }

    /// The log's type CHECK as comparisons: SQLite 3.40 evaluates `type IN (…)` in a CHECK by
    /// building a small table for every row (the comparisons cost nothing measurable). The
    /// table is rebuilt with the same rows, ids and sequence.
    private static func updatesTypeCheckByComparison(_ db: Database) throws {
        let sequence = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'updates'")
        try db.execute(sql: """
            CREATE TABLE updates_rebuilt (
                up_id INTEGER PRIMARY KEY AUTOINCREMENT,
                type TEXT NOT NULL CHECK (type = 'INSERT' OR type = 'UPDATE' OR type = 'DELETE' OR type = 'RESTORE' OR type = 'DUPLICATE'),
                table_name TEXT NOT NULL,
                key_id TEXT NOT NULL,
                user_version INTEGER NOT NULL CHECK (user_version > 0),
                update_date TEXT NOT NULL,
                memo TEXT
            );
            INSERT INTO updates_rebuilt (up_id, type, table_name, key_id, user_version, update_date, memo)
            SELECT up_id, type, table_name, key_id, user_version, update_date, memo FROM updates ORDER BY up_id;
            DROP TABLE updates;
            ALTER TABLE updates_rebuilt RENAME TO updates;
            CREATE INDEX updates_by_version ON updates(user_version);
            CREATE INDEX updates_by_key ON updates(table_name, key_id, user_version);
            """)
        if let sequence {
            try db.execute(sql: "UPDATE sqlite_sequence SET seq = ? WHERE name = 'updates'", arguments: [sequence])
        }
    }

    /// Splits are a handful among millions of log rows; suggestions and split rules read all of
    /// them at every import, which without an index read the whole log.
    /// A partial index holds the DUPLICATE rows alone, so other rows pay nothing for it.
    private static func indexSplits(_ db: Database) throws {
        try db.execute(sql: "CREATE INDEX updates_splits ON updates(user_version) WHERE type = 'DUPLICATE'")
    }

    /// The rules a recorded set was made under: only a set of the same rules is carried
    /// forward row by row (a set without them is found afresh once, then recorded with them).
    private static func recordFindingRules(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE recorded_findings_version ADD COLUMN rules TEXT")
    }

    /// Each column's domain as a CHECK (`ColumnDomain`): a value the code lets through by
    /// mistake still never reaches the master or a phone. SQLite adds a CHECK only by
    /// rebuilding the table. Rows already outside their domain are kept as they are (CHECKs
    /// are not applied while copying them) and reported by `check` under
    /// `value-outside-domain`, an error a release refuses until a curator mends each row.
    private static func checkDomains(_ db: Database) throws {
        try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
        defer { try? db.execute(sql: "PRAGMA ignore_check_constraints = OFF") }
        try db.execute(sql: domainCheckedTables)
        // The next version is checked whole, so that its report names the rows kept outside.
        try db.execute(sql: "DELETE FROM recorded_findings_version")
    }

    /// The data version from which phones have each client schema (`ClientSchemaChange`);
    /// none recorded means the first schema.
    private static func recordClientSchemas(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE client_schemas (schema_version INTEGER PRIMARY KEY, first_data_version INTEGER NOT NULL)
            """)
    }

    /// Curator data: the findings of the version before the newest, kept when the newest's are
    /// recorded (RecordedFindings), so that its review needs no rebuild of the version before.
    private static func recordFindingsBefore(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE recorded_findings_before (
                rule TEXT NOT NULL,
                table_name TEXT NOT NULL,
                key_id TEXT NOT NULL,
                PRIMARY KEY (rule, table_name, key_id)
            ) WITHOUT ROWID;
            CREATE TABLE recorded_findings_before_version (version INTEGER NOT NULL, rules TEXT);
            """)
    }

    /// The log's rows per version, table and kind, kept as each version is written
    /// (`VersionWriter`): `versions`, `status` and `review` read them instead of counting the
    /// log (millions of rows after a 1M initial version).
    private static func keepVersionCounts(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE version_counts (
                version INTEGER NOT NULL,
                table_name TEXT NOT NULL,
                type TEXT NOT NULL,
                count INTEGER NOT NULL,
                PRIMARY KEY (version, table_name, type)
            ) WITHOUT ROWID;
            INSERT INTO version_counts (version, table_name, type, count)
            SELECT user_version, CASE WHEN type = 'DUPLICATE' THEN 'stations' ELSE table_name END, type, COUNT(*)
            FROM updates GROUP BY 1, 2, 3;
            """)
    }

    /// Curator data, never published: what upstream last said (DOMAIN.md, "Two authors: upstream and
    /// curators"), the base of the next import's three-way merge. `<table>_upstream` holds
    /// only the rows where the last imported file differs from the master (a curated fix, a
    /// conflict decided for ours), or lacks the row (`upstream_lacks`: a curator's or a plan's
    /// row, one upstream dropped); every other row of the base is the master's own. So an
    /// import that takes upstream's changes writes almost nothing there, and the first writes
    /// nothing at all. `upstream_imports` records each import of a table: the data
    /// version its base stands at (the version it made, or the master's when it changed
    /// nothing), its snapshot's date (no import backwards) and the columns its file gave (a
    /// column no file gave before has no base). `merge_notes` is the log of what a merge decided beside the
    /// rows it changed: curated values kept, conflicts decided, provisional rows adopted.
    private static func recordUpstream(_ db: Database) throws {
        try db.execute(sql: createUpstreamTables)
    }

    /// Curator data, never published: the content hash of each version a release published,
    /// so that a release never replaces what phones have (`PublishedHistory`): a restored
    /// backup or a diverged master is refused before it writes into the folder.
    private static func recordPublishedVersions(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE published_versions (version INTEGER PRIMARY KEY, content_hash TEXT NOT NULL, recorded_at TEXT NOT NULL)
            """)
    }

    /// Curator data, never published: each published version's manifest entry as the release
    /// wrote it (every file's path, size and SHA-256, each delta's SQL hashes), so that signing
    /// signs only what the master made: a folder whose manifest or files differ from it is
    /// refused before anything is joined or signed (`PublishedHistory`).
    private static func recordPublishedEntries(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE published_versions ADD COLUMN entry TEXT")
    }

    /// Curator data, never published: what each source beside the primary last said and
    /// what it filled (DOMAIN.md, "More than one upstream"). `source_values` is a source's base
    /// for its next import, one value per row and column it gave (a value keeps its storage
    /// class: the column has no type), so a column a client schema adds needs nothing here;
    /// `source_imports` records each import of a table from a source, as `upstream_imports`
    /// does the primary's; `source_disagreements` the cells where the source and the primary
    /// both have a value and differ, as of the source's last import.
    private static func recordSources(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE source_values (
                source TEXT NOT NULL, table_name TEXT NOT NULL, key_id TEXT NOT NULL, column_name TEXT NOT NULL, value,
                PRIMARY KEY (source, table_name, key_id, column_name)
            ) WITHOUT ROWID;
            CREATE TABLE source_imports (
                id INTEGER PRIMARY KEY,
                source TEXT NOT NULL,
                version INTEGER NOT NULL,
                table_name TEXT NOT NULL,
                snapshot_date TEXT,
                file_name TEXT NOT NULL,
                columns TEXT NOT NULL,
                rows INTEGER NOT NULL,
                filled INTEGER NOT NULL,
                added INTEGER NOT NULL,
                closed INTEGER NOT NULL,
                imported_at TEXT NOT NULL
            );
            CREATE TABLE source_disagreements (
                source TEXT NOT NULL, table_name TEXT NOT NULL, key_id TEXT NOT NULL, column_name TEXT NOT NULL,
                primary_value, source_value,
                PRIMARY KEY (source, table_name, key_id, column_name)
            ) WITHOUT ROWID;
            """)
    }

    /// Frozen: the tables as `MasterTable.createStatement` gave them when the CHECKs came
    /// (`MasterSchemaTests` holds the two equal while the declaration does not change).
    package static let domainCheckedTables = """
        CREATE TABLE prefectures_checked (
            pref_cd INTEGER PRIMARY KEY CHECK (pref_cd BETWEEN 1 AND 47 OR pref_cd = 99),
            pref_name TEXT NOT NULL CHECK (pref_name <> '' AND length(CAST(pref_name AS BLOB)) <= 300)
        );
        INSERT INTO prefectures_checked (pref_cd, pref_name)
        SELECT pref_cd, pref_name FROM prefectures;
        DROP TABLE prefectures;
        ALTER TABLE prefectures_checked RENAME TO prefectures;
        CREATE TABLE companies_checked (
            company_cd INTEGER PRIMARY KEY CHECK (company_cd BETWEEN 1 AND 2147483647),
            rr_cd INTEGER CHECK (rr_cd BETWEEN 1 AND 2147483647),
            company_name TEXT NOT NULL CHECK (company_name <> '' AND length(CAST(company_name AS BLOB)) <= 300),
            company_name_k TEXT CHECK (length(CAST(company_name_k AS BLOB)) <= 300),
            company_name_h TEXT CHECK (length(CAST(company_name_h AS BLOB)) <= 300),
            company_name_r TEXT CHECK (length(CAST(company_name_r AS BLOB)) <= 300),
            company_url TEXT CHECK (length(CAST(company_url AS BLOB)) <= 2048),
            company_type INTEGER,
            e_status INTEGER NOT NULL CHECK (e_status BETWEEN 0 AND 2),
            e_sort INTEGER
        );
        INSERT INTO companies_checked (company_cd, rr_cd, company_name, company_name_k, company_name_h, company_name_r, company_url, company_type, e_status, e_sort)
        SELECT company_cd, rr_cd, company_name, company_name_k, company_name_h, company_name_r, company_url, company_type, e_status, e_sort FROM companies;
        DROP TABLE companies;
        ALTER TABLE companies_checked RENAME TO companies;
        CREATE TABLE lines_checked (
            line_cd INTEGER PRIMARY KEY CHECK (line_cd BETWEEN 1 AND 2147483647),
            company_cd INTEGER NOT NULL CHECK (company_cd BETWEEN 1 AND 2147483647),
            line_name TEXT NOT NULL CHECK (line_name <> '' AND length(CAST(line_name AS BLOB)) <= 300),
            line_name_k TEXT CHECK (length(CAST(line_name_k AS BLOB)) <= 300),
            line_name_h TEXT CHECK (length(CAST(line_name_h AS BLOB)) <= 300),
            line_color_c TEXT CHECK (length(CAST(line_color_c AS BLOB)) <= 32),
            line_color_t TEXT CHECK (length(CAST(line_color_t AS BLOB)) <= 300),
            line_type INTEGER,
            lon REAL CHECK (lon BETWEEN -180.0 AND 180.0),
            lat REAL CHECK (lat BETWEEN -90.0 AND 90.0),
            zoom INTEGER,
            e_status INTEGER NOT NULL CHECK (e_status BETWEEN 0 AND 2),
            e_sort INTEGER
        );
        INSERT INTO lines_checked (line_cd, company_cd, line_name, line_name_k, line_name_h, line_color_c, line_color_t, line_type, lon, lat, zoom, e_status, e_sort)
        SELECT line_cd, company_cd, line_name, line_name_k, line_name_h, line_color_c, line_color_t, line_type, lon, lat, zoom, e_status, e_sort FROM lines;
        DROP TABLE lines;
        ALTER TABLE lines_checked RENAME TO lines;
        CREATE TABLE stations_checked (
            station_cd INTEGER PRIMARY KEY CHECK (station_cd BETWEEN 1 AND 2147483647),
            station_g_cd INTEGER CHECK (station_g_cd BETWEEN 1 AND 2147483647),
            station_name TEXT NOT NULL CHECK (station_name <> '' AND length(CAST(station_name AS BLOB)) <= 300),
            station_name_k TEXT CHECK (length(CAST(station_name_k AS BLOB)) <= 300),
            station_name_r TEXT CHECK (length(CAST(station_name_r AS BLOB)) <= 300),
            line_cd INTEGER NOT NULL CHECK (line_cd BETWEEN 1 AND 2147483647),
            pref_cd INTEGER CHECK (pref_cd BETWEEN 1 AND 47),
            post TEXT CHECK (length(CAST(post AS BLOB)) <= 32),
            address TEXT CHECK (length(CAST(address AS BLOB)) <= 600),
            lon REAL CHECK (lon BETWEEN -180.0 AND 180.0),
            lat REAL CHECK (lat BETWEEN -90.0 AND 90.0),
            open_ymd TEXT CHECK (date(open_ymd, '+0 days') IS open_ymd AND open_ymd >= '0001-01-01'),
            close_ymd TEXT CHECK (date(close_ymd, '+0 days') IS close_ymd AND close_ymd >= '0001-01-01'),
            e_status INTEGER NOT NULL CHECK (e_status BETWEEN 0 AND 2),
            e_sort INTEGER,
            weight INTEGER NOT NULL DEFAULT 13 CHECK (weight BETWEEN 1 AND 9 OR weight BETWEEN 11 AND 13)
        );
        INSERT INTO stations_checked (station_cd, station_g_cd, station_name, station_name_k, station_name_r, line_cd, pref_cd, post, address, lon, lat, open_ymd, close_ymd, e_status, e_sort, weight)
        SELECT station_cd, station_g_cd, station_name, station_name_k, station_name_r, line_cd, pref_cd, post, address, lon, lat, open_ymd, close_ymd, e_status, e_sort, weight FROM stations;
        DROP TABLE stations;
        ALTER TABLE stations_checked RENAME TO stations;
        CREATE INDEX stations_on_line ON stations(line_cd);
        CREATE TABLE connections_checked (
            line_cd INTEGER NOT NULL CHECK (line_cd BETWEEN 1 AND 2147483647),
            station_cd1 INTEGER NOT NULL CHECK (station_cd1 BETWEEN 1 AND 2147483647),
            station_cd2 INTEGER NOT NULL CHECK (station_cd2 BETWEEN 1 AND 2147483647),
            PRIMARY KEY (line_cd, station_cd1, station_cd2)
        ) WITHOUT ROWID;
        INSERT INTO connections_checked (line_cd, station_cd1, station_cd2)
        SELECT line_cd, station_cd1, station_cd2 FROM connections;
        DROP TABLE connections;
        ALTER TABLE connections_checked RENAME TO connections;
        """

    /// Frozen: the upstream bases, one per master table and of its columns and key, and the
    /// records of imports and merges (the migration `recordUpstream`).
    package static let createUpstreamTables = """
        CREATE TABLE prefectures_upstream (
            pref_cd INTEGER PRIMARY KEY, pref_name TEXT,
            upstream_lacks INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE companies_upstream (
            company_cd INTEGER PRIMARY KEY, rr_cd INTEGER, company_name TEXT, company_name_k TEXT,
            company_name_h TEXT, company_name_r TEXT, company_url TEXT, company_type INTEGER,
            e_status INTEGER, e_sort INTEGER,
            upstream_lacks INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE lines_upstream (
            line_cd INTEGER PRIMARY KEY, company_cd INTEGER, line_name TEXT, line_name_k TEXT,
            line_name_h TEXT, line_color_c TEXT, line_color_t TEXT, line_type INTEGER,
            lon REAL, lat REAL, zoom INTEGER, e_status INTEGER, e_sort INTEGER,
            upstream_lacks INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE stations_upstream (
            station_cd INTEGER PRIMARY KEY, station_g_cd INTEGER, station_name TEXT, station_name_k TEXT,
            station_name_r TEXT, line_cd INTEGER, pref_cd INTEGER, post TEXT, address TEXT,
            lon REAL, lat REAL, open_ymd TEXT, close_ymd TEXT, e_status INTEGER, e_sort INTEGER,
            weight INTEGER,
            upstream_lacks INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE connections_upstream (
            line_cd INTEGER NOT NULL, station_cd1 INTEGER NOT NULL, station_cd2 INTEGER NOT NULL,
            upstream_lacks INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (line_cd, station_cd1, station_cd2)
        ) WITHOUT ROWID;
        CREATE TABLE upstream_imports (
            id INTEGER PRIMARY KEY,
            version INTEGER NOT NULL,
            made_version INTEGER NOT NULL,
            table_name TEXT NOT NULL,
            snapshot_date TEXT,
            file_name TEXT NOT NULL,
            columns TEXT NOT NULL
        );
        CREATE INDEX upstream_imports_by_table ON upstream_imports(table_name, version);
        CREATE TABLE merge_notes (
            version INTEGER NOT NULL,
            table_name TEXT NOT NULL,
            key_id TEXT NOT NULL,
            column_name TEXT NOT NULL,
            outcome TEXT NOT NULL,
            base TEXT,
            ours TEXT,
            theirs TEXT,
            ours_version INTEGER,
            PRIMARY KEY (version, table_name, key_id, column_name)
        ) WITHOUT ROWID;
        CREATE INDEX merge_notes_by_key ON merge_notes(table_name, key_id);
        """

    package static let createMasterTables = """
        CREATE TABLE prefectures (
            pref_cd INTEGER PRIMARY KEY,
            pref_name TEXT NOT NULL
        );
        CREATE TABLE companies (
            company_cd INTEGER PRIMARY KEY,
            rr_cd INTEGER,
            company_name TEXT NOT NULL,
            company_name_k TEXT,
            company_name_h TEXT,
            company_name_r TEXT,
            company_url TEXT,
            company_type INTEGER,
            e_status INTEGER NOT NULL,
            e_sort INTEGER
        );
        CREATE TABLE lines (
            line_cd INTEGER PRIMARY KEY,
            company_cd INTEGER NOT NULL,
            line_name TEXT NOT NULL,
            line_name_k TEXT,
            line_name_h TEXT,
            line_color_c TEXT,
            line_color_t TEXT,
            line_type INTEGER,
            lon REAL,
            lat REAL,
            zoom INTEGER,
            e_status INTEGER NOT NULL,
            e_sort INTEGER
        );
        CREATE TABLE stations (
            station_cd INTEGER PRIMARY KEY,
            station_g_cd INTEGER,
            station_name TEXT NOT NULL,
            station_name_k TEXT,
            station_name_r TEXT,
            line_cd INTEGER NOT NULL,
            pref_cd INTEGER,
            post TEXT,
            address TEXT,
            lon REAL,
            lat REAL,
            open_ymd TEXT,
            close_ymd TEXT,
            e_status INTEGER NOT NULL,
            e_sort INTEGER,
            weight INTEGER NOT NULL DEFAULT 13
        );
        CREATE INDEX stations_on_line ON stations(line_cd);
        CREATE TABLE connections (
            line_cd INTEGER NOT NULL,
            station_cd1 INTEGER NOT NULL,
            station_cd2 INTEGER NOT NULL,
            PRIMARY KEY (line_cd, station_cd1, station_cd2)
        ) WITHOUT ROWID;

        CREATE TABLE updates (
            up_id INTEGER PRIMARY KEY AUTOINCREMENT,
            type TEXT NOT NULL CHECK (type IN ('INSERT', 'UPDATE', 'DELETE', 'RESTORE', 'DUPLICATE')),
            table_name TEXT NOT NULL,
            key_id TEXT NOT NULL,
            user_version INTEGER NOT NULL CHECK (user_version > 0),
            update_date TEXT NOT NULL,
            memo TEXT
        );
        CREATE INDEX updates_by_version ON updates(user_version);
        CREATE INDEX updates_by_key ON updates(table_name, key_id, user_version);

        CREATE TABLE prefectures_history (
            key_id TEXT NOT NULL, valid_to INTEGER NOT NULL,
            pref_cd INTEGER, pref_name TEXT,
            PRIMARY KEY (key_id, valid_to)
        ) WITHOUT ROWID;
        CREATE TABLE companies_history (
            key_id TEXT NOT NULL, valid_to INTEGER NOT NULL,
            company_cd INTEGER, rr_cd INTEGER, company_name TEXT, company_name_k TEXT,
            company_name_h TEXT, company_name_r TEXT, company_url TEXT, company_type INTEGER,
            e_status INTEGER, e_sort INTEGER,
            PRIMARY KEY (key_id, valid_to)
        ) WITHOUT ROWID;
        CREATE TABLE lines_history (
            key_id TEXT NOT NULL, valid_to INTEGER NOT NULL,
            line_cd INTEGER, company_cd INTEGER, line_name TEXT, line_name_k TEXT,
            line_name_h TEXT, line_color_c TEXT, line_color_t TEXT, line_type INTEGER,
            lon REAL, lat REAL, zoom INTEGER, e_status INTEGER, e_sort INTEGER,
            PRIMARY KEY (key_id, valid_to)
        ) WITHOUT ROWID;
        CREATE TABLE stations_history (
            key_id TEXT NOT NULL, valid_to INTEGER NOT NULL,
            station_cd INTEGER, station_g_cd INTEGER, station_name TEXT, station_name_k TEXT,
            station_name_r TEXT, line_cd INTEGER, pref_cd INTEGER, post TEXT, address TEXT,
            lon REAL, lat REAL, open_ymd TEXT, close_ymd TEXT, e_status INTEGER, e_sort INTEGER,
            weight INTEGER,
            PRIMARY KEY (key_id, valid_to)
        ) WITHOUT ROWID;
        CREATE TABLE connections_history (
            key_id TEXT NOT NULL, valid_to INTEGER NOT NULL,
            line_cd INTEGER, station_cd1 INTEGER, station_cd2 INTEGER,
            PRIMARY KEY (key_id, valid_to)
        ) WITHOUT ROWID;
        """
}
