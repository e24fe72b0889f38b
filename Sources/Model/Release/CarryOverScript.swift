import Foundation
import GRDB
import StationLog
import StationManifest
import StationSchema
import StationSupport

/// The SQL that carries a user's records from the app's working database, at any data version
/// v from 0 to V, into a fresh version-V database: what a phone runs after a full download or
/// an app update (DOMAIN.md, "Three ways to the newest version"), so that it keeps the same records as a phone that
/// took the delta.
///
/// The app opens its working database (`main`), attaches the fresh one as `incoming`, and runs
/// the script inside one transaction; then it replaces the working file with the fresh one. The
/// script copies every record, then replays, in the order they were recorded, the splits the
/// working database has not seen (those of versions after its `user_version`), each copying the
/// old station's record to the new station unless the user already has one there. For example,
/// with splits 1141512 → 9944001 (version 3) and 9944001 → 9950001 (version 5), release 5's
/// script reads
///
///     DROP TABLE IF EXISTS temp.station_admin_carry_over;
///     CREATE TEMP TABLE station_admin_carry_over (from_version INTEGER
///         CONSTRAINT "the working database must be at data version 5 or older" CHECK (from_version BETWEEN 0 AND 5));
///     INSERT INTO temp.station_admin_carry_over SELECT user_version FROM pragma_user_version;
///     INSERT OR IGNORE INTO incoming.completions (station_cd, date, memo, updated_at)
///         SELECT station_cd, date, memo, updated_at FROM main.completions;
///     INSERT OR IGNORE INTO incoming.completions (station_cd, date, memo, updated_at)
///         SELECT 9944001, date, memo, updated_at FROM incoming.completions
///         WHERE station_cd = 1141512 AND (SELECT from_version FROM temp.station_admin_carry_over) < 3;
///     INSERT OR IGNORE INTO … SELECT 9950001, … WHERE station_cd = 9944001 AND (…) < 5;
///     DROP TABLE temp.station_admin_carry_over;
///
/// so a phone at version 2 with a record of 1141512 ends with the same record on all three
/// codes (the chain), and a phone at version 4 only gets the second split. Nothing is ever
/// overwritten (`INSERT OR IGNORE`), so running the script twice changes nothing the second
/// time. Like the deltas it needs SQLite 3.16 (`pragma_user_version` as a table).
///
/// The script names no file and depends only on the splits up to V, so one script per release
/// serves every older version, and the same version always gives the same bytes.
public enum CarryOverScript {
    /// The schema name under which the app attaches the fresh database.
    public static let incomingSchema = "incoming"

    package static func write(to version: Int, splits: [StationSplit], into sink: ByteSink) throws {
        precondition(splits.allSatisfy { $0.version <= version }, "a carry-over to \(version) with a later split")
        let fromVersion = "(SELECT from_version FROM temp.station_admin_carry_over)"
        try sink.write("""
            -- StationAdmin carry-over of user records to data version \(version).
            -- Run it on the app's working database (main, at data version 0 to \(version)) with the fresh
            -- version-\(version) database attached as "\(incomingSchema)", inside one transaction; then use the fresh file.
            DROP TABLE IF EXISTS temp.station_admin_carry_over;
            CREATE TEMP TABLE station_admin_carry_over (from_version INTEGER CONSTRAINT "the working database must be at data version \(version) or older" CHECK (from_version BETWEEN 0 AND \(version)));
            INSERT INTO temp.station_admin_carry_over SELECT user_version FROM pragma_user_version;
            \(UserRecords.copyAll(into: incomingSchema, from: "main"));

            """)
        if !splits.isEmpty {
            try sink.write("-- station splits after the working database's version, in the order recorded: copy each record of the old station to the new one, keeping any the user already has\n")
        }
        for split in splits {
            try sink.write(UserRecords.splitCopy(.literal(old: split.old, new: split.new), into: incomingSchema, from: incomingSchema,
                                                 where: "\(fromVersion) < \(split.version)") + ";\n")
        }
        try sink.write("DROP TABLE temp.station_admin_carry_over;\n")
    }
}

extension Publisher {
    /// Writes the carry-over script of version `version` (default: the newest) into `sink`.
    ///
    /// - Throws: `NoSuchVersion`.
    public func writeCarryOver(version: Int? = nil, into sink: ByteSink) throws {
        try master.readingOneState { db in
            let newest = try MasterDatabase.dataVersion(db)
            let version = version ?? newest
            try NoSuchVersion.require(version, newest: newest, lowest: 0)
            try CarryOverScript.write(to: version, splits: UpdateLog.splits(db, after: 0, through: version), into: sink)
        }
        try sink.finish()
    }
}
