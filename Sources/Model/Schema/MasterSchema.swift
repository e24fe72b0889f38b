import GRDB

/// The master database's schema, as frozen migrations.
///
/// Migrations are history: never edit one that has shipped, add another.
/// Each master table has a `<table>_history` twin that keeps every superseded row
/// state with the version that superseded it (`valid_to`), so that any past version
/// can be rebuilt (see `VersionedState`).
public enum MasterSchema {
    public static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("createMasterTables") { db in
            try db.execute(sql: createMasterTables)
        }
        migrator.registerMigration("stampMaster") { db in
            try MasterStamp.stamp(db)
        }
        // Curator data, never published: who committed each version, when, and why.
        migrator.registerMigration("recordVersions") { db in
            try db.execute(sql: """
                CREATE TABLE versions (
                    version INTEGER PRIMARY KEY,
                    committed_at TEXT NOT NULL,
                    author TEXT,
                    memo TEXT
                )
                """)
        }
        // Curator data, never published: findings of `check` a curator accepted, with why.
        migrator.registerMigration("recordWaivers") { db in
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
        // Curator data, never published: the findings of the newest version, so that the next
        // version's report names what it introduces without rebuilding this one (RecordedFindings).
        migrator.registerMigration("recordFindings") { db in
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
        // The log's type CHECK as comparisons: SQLite 3.40 evaluates `type IN (…)` in a CHECK by
        // building a small table for every row, 1.9 s of a million-row import (the comparisons
        // cost nothing measurable). The table is rebuilt with the same rows, ids and sequence.
        migrator.registerMigration("updatesTypeCheckByComparison") { db in
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
        // Splits are a handful among millions of log rows; suggestions and split rules read all of
        // them at every import, which without an index read the whole log (0.45 s at 1M stations).
        // A partial index holds the DUPLICATE rows alone, so other rows pay nothing for it.
        migrator.registerMigration("indexSplits") { db in
            try db.execute(sql: "CREATE INDEX updates_splits ON updates(user_version) WHERE type = 'DUPLICATE'")
        }
        // The rules a recorded set was made under: only a set of the same rules is carried
        // forward row by row (a set without them is found afresh once, then recorded with them).
        migrator.registerMigration("recordFindingRules") { db in
            try db.execute(sql: "ALTER TABLE recorded_findings_version ADD COLUMN rules TEXT")
        }
        return migrator
    }

    static let createMasterTables = """
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
