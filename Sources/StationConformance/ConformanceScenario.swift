/// One scenario of the release protocol (docs/clients.md, "A client on another platform"): a
/// client database at a starting version, one or more runs of the client against a served
/// release folder, and what each run must leave.
public struct ConformanceScenario: Sendable, Identifiable {
    /// What the scenario is about; `--group` picks scenarios by it (an adapter for a client that
    /// keeps its data elsewhere runs the groups that apply to it).
    public enum Group: String, Sendable, CaseIterable, Codable {
        case delta, full, update, splits, schema, trust, freshness, bounds, recovery
    }

    /// Where the client's database starts.
    public enum Start: Sendable, Equatable {
        /// A copy of release `version`'s client database, with users' records and the app's tables.
        case version(Int)
        /// No file: a new install.
        case newInstall
    }

    /// What a run must leave.
    public enum Expectation: Sendable, Equatable {
        /// Exit 0, the database at this release's version with its tables, every record kept and
        /// each split's record copied.
        case reaches(Int)
        /// Exit non-zero, the release's tables and the app's exactly as they were before the run
        /// (the client may have recorded a manifest it verified, in a table of its own, before a
        /// file of it was refused or cut).
        case refuses
        /// Exit 0, the database exactly as it was (up to date), but for the client's own record.
        case unchanged
        /// Either, as for `reaches`, or a refusal as for `refuses`: where a client may get round
        /// the hostile answer (one that never asks for a range is answered honestly; one that
        /// takes the full database never reads an altered delta). One that takes the bad file
        /// and exits 0 fails the checks of `reaches`.
        case reachesOrRefuses(Int)
    }

    /// One run of the client against the release folder `folder` served with `behaviour`.
    public struct Run: Sendable {
        public let folder: ReleaseVariant
        public let behaviour: ServerBehaviour
        public let expectation: Expectation

        public init(_ folder: ReleaseVariant, _ behaviour: ServerBehaviour = .honest, expect expectation: Expectation) {
            self.folder = folder
            self.behaviour = behaviour
            self.expectation = expectation
        }
    }

    /// A stable id (`trust.delta-altered`): reports, `--scenario` and CI histories name it.
    public let id: String
    public let group: Group
    /// One sentence: what a client that fails it would do to its users.
    public let protects: String
    public let start: Start
    public let runs: [Run]
    /// Runs killed at random instants before the runs above (each must leave the old database or
    /// the new one, whole).
    public let kills: Int

    init(_ id: String, _ group: Group, _ protects: String, start: Start, runs: [Run], kills: Int = 0) {
        self.id = id
        self.group = group
        self.protects = protects
        self.start = start
        self.runs = runs
        self.kills = kills
    }
}

/// A release folder the kit serves: the honest one, or one changed as an attacker or a broken
/// pipeline would.
public enum ReleaseVariant: String, Sendable, CaseIterable {
    /// Versions 1…5, signed by the trusted key.
    case honest
    /// The same, each older version offered the full database instead of its delta.
    case fullOnly = "full-only"
    /// The folder as it was signed when version 4 was the newest (an older sequence).
    case atFour = "at-4"
    /// The honest manifest with a byte changed after signing.
    case manifestAltered = "manifest-altered"
    /// The honest folder without its manifest (a 404).
    case noManifest = "no-manifest"
    /// The honest folder without `manifest.json.sig`.
    case unsigned
    /// Signed by a key the client does not trust.
    case otherKey = "other-key"
    /// The delta from 3 replaced by one that also deletes the users' records.
    case deltaAltered = "delta-altered"
    /// Full-only, its database gzip replaced by one with a station renamed.
    case databaseAltered = "database-altered"
    /// The delta from 3 replaced by version 4's delta from 3, listed and signed: its result is
    /// version 4, not the 5 it claims.
    case deltaOfAnotherVersion = "delta-of-another-version"
    /// The delta from 3 with one more statement before its version is set (a station renamed),
    /// listed and signed with its true hashes: the right guard and version, the wrong rows (a
    /// release tool's bug), which only the content hash of the result shows.
    case deltaWrongContent = "delta-wrong-content"
    /// The honest manifest signed as of ten days ago, expired nine days ago.
    case expired
    /// The honest folder signed as of 30 days from now (published then, valid for 7 days more):
    /// to the client, a world whose clock is ahead of its own.
    case publishedAhead = "published-ahead"
    /// `publishedAhead` signed again (a higher sequence) as of now, expiring in 10 days: valid by
    /// the client's clock, expired before the newest `published_at` it accepted.
    case expiredBeforeAccepted = "expired-before-accepted"
    /// The honest folder signed as another dataset's.
    case otherDataset = "other-dataset"
    /// The delta from 3 replaced by a gzip that inflates to 512 MiB of spaces, listed and signed
    /// with its true file hash and the SQL's declared size and hash.
    case gzipBomb = "gzip-bomb"
}

/// How the kit's server answers a scenario's requests.
public enum ServerBehaviour: String, Sendable, CaseIterable {
    /// The files as any static host serves them, with ranges (206).
    case honest
    /// `manifest.json` is an endless body (chunked, no length).
    case endlessManifest = "endless-manifest"
    /// `manifest.json` claims 10^12 bytes and sends without end.
    case hugeManifest = "huge-manifest"
    /// A request with a `Range` header gets an endless 206 body.
    case endlessRange = "endless-range"
    /// A `.gz` file comes one byte a second (its true length first).
    case oneByteASecond = "one-byte-a-second"
    /// A `.gz` file claims 1,000 bytes more than it sends, then the connection closes.
    case lyingContentLength = "lying-content-length"
    /// A `.gz` file stops halfway, the connection closed.
    case diesMidDownload = "dies-mid-download"
}

extension ConformanceScenario {
    /// The newest version of the kit's releases.
    public static let newest = 5

    /// Every scenario, in the order the kit runs and reports them.
    public static let all: [ConformanceScenario] = {
        var scenarios: [ConformanceScenario] = []
        for version in 1..<newest {
            scenarios.append(.init("delta.from-\(version)", .delta,
                "A client at version \(version) reaches \(newest) by its delta, keeping every record, copying each later split's records once, the app's tables untouched.",
                start: .version(version), runs: [.init(.honest, expect: .reaches(newest))]))
        }
        for version in 1..<newest {
            scenarios.append(.init("full.from-\(version)", .full,
                "A client at version \(version) offered only the full database reaches \(newest) with the carry-over: its records and the app's tables survive the new file.",
                start: .version(version), runs: [.init(.fullOnly, expect: .reaches(newest))]))
        }
        scenarios += [
            .init("full.new-install", .full, "A new install (no database yet) downloads the newest database and opens it.",
                  start: .newInstall, runs: [.init(.honest, expect: .reaches(newest))]),
            .init("update.up-to-date", .update, "A client at the newest version changes nothing and succeeds.",
                  start: .version(newest), runs: [.init(.honest, expect: .unchanged)]),
            .init("update.in-two-steps", .update,
                  "A client that took version 4 and later 5 copies each split once: version 4's splits are not replayed by 5.",
                  start: .version(1), runs: [.init(.atFour, expect: .reaches(4)), .init(.honest, expect: .reaches(newest))]),
            .init("splits.copied-once", .splits, "Running the update again after it succeeded copies no split a second time.",
                  start: .version(1), runs: [.init(.honest, expect: .reaches(newest)), .init(.honest, expect: .unchanged)]),
            .init("splits.chain-by-full", .splits,
                  "A chain of splits (A → B at 2, B → C at 3) carries A's record to C on the full path, and never over a record the user has at the new station.",
                  start: .version(1), runs: [.init(.fullOnly, expect: .reaches(newest))]),
            .init("schema.grown-by-delta", .schema,
                  "A client whose database has client schema 1 takes the delta that adds a column (schema 2) and ends with the new schema.",
                  start: .version(3), runs: [.init(.honest, expect: .reaches(newest))]),
            .init("trust.manifest-altered", .trust, "A manifest changed after signing is refused before anything is downloaded or run.",
                  start: .version(3), runs: [.init(.manifestAltered, expect: .refuses)]),
            .init("trust.unsigned", .trust, "A folder without signatures is refused: anyone who can write the mirror could publish it.",
                  start: .version(3), runs: [.init(.unsigned, expect: .refuses)]),
            .init("trust.other-key", .trust, "A manifest signed by a key the app does not pin is refused.",
                  start: .version(3), runs: [.init(.otherKey, expect: .refuses)]),
            .init("trust.delta-altered", .trust, "A delta whose bytes are not the signed ones is never run (this one deletes every record); a client may take the full database instead.",
                  start: .version(3), runs: [.init(.deltaAltered, expect: .reachesOrRefuses(newest))]),
            .init("trust.database-altered", .trust, "A full database whose bytes are not the signed ones is never installed.",
                  start: .version(3), runs: [.init(.databaseAltered, expect: .refuses)]),
            .init("trust.delta-result-not-its-version", .trust,
                  "A signed delta whose result is not the version and content it claims is rolled back, not committed.",
                  start: .version(3), runs: [.init(.deltaOfAnotherVersion, expect: .reachesOrRefuses(newest))]),
            .init("trust.delta-result-not-its-content", .trust,
                  "A signed delta at the right version whose result is not the signed content (a release tool's bug) is rolled back: the client hashes what it installed.",
                  start: .version(3), runs: [.init(.deltaWrongContent, expect: .reachesOrRefuses(newest))]),
            .init("trust.manifest-missing", .trust, "A folder whose manifest is missing (404) changes nothing.",
                  start: .version(3), runs: [.init(.noManifest, expect: .refuses)]),
            .init("freshness.rollback", .freshness,
                  "After accepting a manifest, an older one replayed (a lower sequence) is refused: a mirror cannot take users back.",
                  start: .version(3), runs: [.init(.honest, expect: .reaches(newest)), .init(.atFour, expect: .refuses)]),
            .init("freshness.rollback-with-forward-path", .freshness,
                  "A client that accepted the newest manifest but whose download was cut refuses an older manifest next, though it offers a valid delta forward: it remembers the sequence from the moment it accepts.",
                  start: .version(3), runs: [.init(.honest, .diesMidDownload, expect: .refuses), .init(.atFour, expect: .refuses)]),
            .init("freshness.expired", .freshness, "An expired manifest (a frozen mirror) is refused.",
                  start: .version(3), runs: [.init(.expired, expect: .refuses)]),
            .init("freshness.clock-behind", .freshness,
                  "A client whose clock is behind a manifest it accepted refuses one that expired before that manifest was published, though its own clock calls it valid: a frozen mirror cannot hold it on a stale release.",
                  start: .version(3), runs: [.init(.publishedAhead, expect: .reaches(newest)), .init(.expiredBeforeAccepted, expect: .refuses)]),
            .init("freshness.other-dataset", .freshness,
                  "A manifest of another dataset, signed by the same key, is refused once the client has accepted its own.",
                  start: .version(3), runs: [.init(.atFour, expect: .reaches(4)), .init(.otherDataset, expect: .refuses)]),
            .init("bounds.endless-manifest", .bounds, "An endless manifest body is abandoned within the deadline and the memory bound.",
                  start: .version(3), runs: [.init(.honest, .endlessManifest, expect: .refuses)]),
            .init("bounds.huge-manifest", .bounds, "A manifest claiming 10^12 bytes is abandoned within the bounds.",
                  start: .version(3), runs: [.init(.honest, .hugeManifest, expect: .refuses)]),
            .init("bounds.endless-range", .bounds, "An endless answer to a range request is abandoned within the bounds (a client that asks for no range gets the file).",
                  start: .version(3), runs: [.init(.honest, .endlessRange, expect: .reachesOrRefuses(newest))]),
            .init("bounds.one-byte-a-second", .bounds, "A download trickling one byte a second is abandoned within the deadline.",
                  start: .version(3), runs: [.init(.honest, .oneByteASecond, expect: .refuses)]),
            .init("bounds.lying-content-length", .bounds, "A download shorter than its Content-Length is not taken for whole.",
                  start: .version(3), runs: [.init(.honest, .lyingContentLength, expect: .refuses)]),
            .init("bounds.gzip-bomb", .bounds,
                  "A signed delta that inflates far beyond its declared size is stopped at that size, within the memory bound and the bound of what the client writes.",
                  start: .version(3), runs: [.init(.gzipBomb, expect: .reachesOrRefuses(newest))]),
            .init("recovery.server-dies-then-honest", .recovery,
                  "A download cut by a dying server changes nothing; the next run, against an honest server, completes.",
                  start: .version(2), runs: [.init(.honest, .diesMidDownload, expect: .reachesOrRefuses(newest)), .init(.honest, expect: .reaches(newest))]),
            .init("recovery.killed-during-delta", .recovery,
                  "Killed at any instant of a delta update, the database is the old one or the new one, whole; the next run completes.",
                  start: .version(1), runs: [.init(.honest, expect: .reaches(newest))], kills: 20),
            .init("recovery.killed-during-full", .recovery,
                  "Killed at any instant of a full update, the database is the old one or the new one, whole; the next run completes.",
                  start: .version(2), runs: [.init(.fullOnly, expect: .reaches(newest))], kills: 20),
        ]
        return scenarios
    }()
}
