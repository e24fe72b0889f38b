import Foundation
import StationManifest
import StationSupport

/// Checks a manifest against the folder it describes: the contract phones, servers and CDNs
/// rely on, since they follow `downloads` without asking anything else.
///
/// - `newest` is the highest listed version; versions are listed once, in order.
/// - Every path is relative, normalised and inside the folder, reaches a regular file through
///   real folders (no link), and is where `ReleaseLayout` puts it; the file has the size (and,
///   at `Depth.hashes`, the SHA-256) its entry says.
/// - Each delta goes from an older version (1 to V − 1) to its own version V; a joined one
///   through a version between the two.
/// - `downloads` names each older version 1 … V − 1 once: a delta entry names the delta from that
///   version, a full entry that version's gzip database and its carry-over script.
/// - `rows` are the database's row counts, table by table, and its `user_version` is V (at
///   `Depth.contents` and deeper).
/// - Nothing else is in the folder but `manifest.json`, the lock file and what a killed release
///   left before publishing (`isLeftover`).
package struct ManifestAudit {
    /// How deeply a version's files are read.
    package enum Depth: Comparable {
        /// The entries alone: the version's files and folder are not looked at (a version
        /// that this process audited under the folder's lock and has not touched since).
        case listed
        /// Paths, kinds and sizes.
        case sizes
        /// And the database's `user_version` and rows, as `databaseContents` reads them.
        case contents
        /// And every file's SHA-256.
        case hashes
    }

    /// The release folder's path.
    package let folder: String
    /// How deeply each version's files are read.
    package let depth: (Int) -> Depth
    /// A client database's `user_version` and rows per table: read through SQLite by the release
    /// (`ReleaseFolder.databaseContents`), which this format-only target does not link. Without
    /// it, `Depth.contents` and `.hashes` leave the rows unread.
    package let databaseContents: DatabaseContents?
    /// How a database's `user_version` and rows per table are read.
    package typealias DatabaseContents = (String) throws -> (version: Int, rows: [String: Int])
    /// The version folders on the way to the files, each looked at once per audit.
    private let folderKinds = FolderKinds()

    package init(folder: String, depth: @escaping (Int) -> Depth, databaseContents: DatabaseContents? = nil) {
        self.folder = folder
        self.depth = depth
        self.databaseContents = databaseContents
    }

    /// - Throws: `ManifestError.disagrees` with every problem found.
    package func requireAgreement(_ manifest: Manifest) throws {
        let problems = try problems(manifest)
        if !problems.isEmpty { throw ManifestError.disagrees((folder as NSString).appendingPathComponent(Manifest.fileName), problems) }
    }

    /// The path of `relative` inside the folder.
    private func filePath(_ relative: String) -> String { (folder as NSString).appendingPathComponent(relative) }

    package func problems(_ manifest: Manifest) throws -> [ManifestProblem] {
        var problems: [ManifestProblem] = []
        func problem(_ field: String, _ file: String? = nil, _ reason: String) {
            problems.append(ManifestProblem(field: field, file: file, reason: reason))
        }
        if manifest.format > Manifest.currentFormat {
            problem("format", nil, "\(manifest.format), newer than this StationAdmin reads (up to \(Manifest.currentFormat)); use the StationAdmin that released it, or a newer one")
        }
        let numbers = manifest.versions.map(\.version)
        if numbers != Array(Set(numbers)).sorted() {
            problem("versions", nil, "versions \(numbers.map(String.init).joined(separator: ", ")) (expected each version once, in increasing order)")
        }
        if manifest.newest != (numbers.max() ?? 0) {
            problem("newest", nil, "\(manifest.newest), but the highest version listed is \(numbers.max().map(String.init) ?? "none")")
        }
        var listed = ReleaseLayout.folderFiles
        for released in manifest.versions {
            try audit(released, in: manifest, listed: &listed, problem)
        }
        problems += unlisted(listed: listed)
        return problems
    }

    private func audit(_ released: ReleasedVersion, in manifest: Manifest, listed: inout Set<String>,
                       _ problem: (String, String?, String) -> Void) throws {
        let format = manifest.format
        let version = released.version
        let field = "versions[\(version)]"
        var filesOK = true
        func file(_ entry: ReleasedFile?, _ name: String, _ expected: String) throws {
            guard let entry else {
                problem("\(field).\(name)", nil, "missing (expected the file \(expected))")
                filesOK = false
                return
            }
            listed.insert(entry.path)
            if let reason = depth(version) == .listed ? Self.placeProblem(entry, expected: expected)
                : fileProblem(entry, expected: expected, hash: depth(version) >= .hashes) {
                problem("\(field).\(name).path", entry.path, reason)
                filesOK = false
            }
        }
        try file(released.database, "database", ReleaseLayout.database(version))
        try file(released.databaseGzip, "database_gzip", ReleaseLayout.databaseGzip(version))
        if format >= 3 || released.carryOver != nil {
            try file(released.carryOver, "carry_over", ReleaseLayout.carryOver(version))
        }
        // Every phone's update ends at the newest version: its hash must say which columns it covers.
        if format >= 7, version == manifest.newest {
            let listed = Set(released.contentColumns?.keys.map { $0 } ?? [])
            if let missing = ReleaseContent.hashedTables.first(where: { !listed.contains($0) }) {
                problem("\(field).content_columns", nil, "lists no columns of \(missing) (expected the columns content_hash covers, for each of \(ReleaseContent.hashedTables.joined(separator: ", ")))")
            }
        }
        let deltaPaths = try auditDeltas(released, field: field, problem, file: file)
        Self.auditDownloads(released, format: format, deltaPaths: deltaPaths, field: field, problem)
        // The rows are read only from a file that is where it should be (and, hashing, ours).
        if filesOK, depth(version) >= .contents, let databaseContents { auditRows(released, databaseContents, field: field, problem) }
    }

    /// Each delta's versions and file, and its join and SQL; the path of each, by the version it
    /// comes from.
    private func auditDeltas(_ released: ReleasedVersion, field: String, _ problem: (String, String?, String) -> Void,
                             file: (ReleasedFile?, String, String) throws -> Void) throws -> [Int: String] {
        let version = released.version
        var deltaPaths: [Int: String] = [:]
        for delta in released.deltas {
            let name = "deltas[from \(delta.from)]"
            if delta.to != version { problem("\(field).\(name).to", delta.file.path, "\(delta.to) (expected \(version), the version it belongs to)") }
            if !(1..<version).contains(delta.from) { problem("\(field).\(name).from", delta.file.path, "\(delta.from) (expected an older version, 1 to \(version - 1))") }
            if deltaPaths[delta.from] != nil { problem("\(field).\(name)", delta.file.path, "a second delta from \(delta.from)") }
            deltaPaths[delta.from] = delta.file.path
            try file(delta.file, "\(name).file", ReleaseLayout.delta(from: delta.from, to: version))
            if let via = delta.via, let reason = Self.joinProblem(delta, via: via, of: released) {
                problem("\(field).\(name).via", delta.file.path, reason)
            }
            if let (key, reason) = Self.sqlProblem(delta) {
                problem("\(field).\(name).\(key)", delta.file.path, reason)
            }
        }
        return deltaPaths
    }

    /// What each older version downloads: every one once, a delta listed, or the database with
    /// its carry-over script.
    private static func auditDownloads(_ released: ReleasedVersion, format: Int, deltaPaths: [Int: String], field: String,
                                       _ problem: (String, String?, String) -> Void) {
        let version = released.version
        let froms = released.downloads.map(\.from)
        if froms.sorted() != Array(1..<max(version, 1)) {
            problem("\(field).downloads", nil, "for versions \(froms.map(String.init).joined(separator: ", ")) (expected each older version 1 to \(version - 1) once)")
        }
        for download in released.downloads {
            let name = "\(field).downloads[from \(download.from)]"
            if let reason = unsafe(download.path) {
                problem("\(name).path", download.path, reason)
                continue
            }
            switch download.kind {
            case .delta:
                guard let path = deltaPaths[download.from] else {
                    problem("\(name).path", download.path, "a delta download, but version \(version) lists no delta from \(download.from)")
                    continue
                }
                if download.path != path { problem("\(name).path", download.path, "not the delta from \(download.from) (expected \(path))") }
                if download.carryOver != nil { problem("\(name).carry_over", download.carryOver, "a delta carries its splits itself (expected null)") }
            case .full:
                if download.path != released.databaseGzip.path {
                    problem("\(name).path", download.path, "not version \(version)'s database (expected \(released.databaseGzip.path))")
                }
                if (format >= 3 || released.carryOver != nil), download.carryOver != released.carryOver?.path {
                    problem("\(name).carry_over", download.carryOver,
                            "not version \(version)'s carry-over script (expected \(released.carryOver?.path ?? ReleaseLayout.carryOver(version)))")
                }
            }
        }
    }

    /// The database's `user_version` and row counts against the manifest's.
    private func auditRows(_ released: ReleasedVersion, _ databaseContents: DatabaseContents, field: String,
                           _ problem: (String, String?, String) -> Void) {
        let counts: (version: Int, rows: [String: Int])
        do {
            counts = try databaseContents(filePath(released.database.path))
        } catch {
            problem("\(field).database", released.database.path, "not a readable SQLite database (\(error.localizedDescription))")
            return
        }
        if counts.version != released.version {
            problem("\(field).database", released.database.path, "user_version \(counts.version) (expected \(released.version))")
        }
        for table in Set(counts.rows.keys).union(released.rows.keys).sorted() where counts.rows[table] != released.rows[table] {
            problem("\(field).rows.\(table)", released.database.path,
                    "\(released.rows[table].map(String.init) ?? "missing"), but the database holds \(counts.rows[table].map { "\($0) rows" } ?? "no such table")")
        }
    }

    /// Why a joined delta's `via` cannot be what it joined through, or nil. Its parts are not
    /// compared with the files listed now: a version released again may list other bytes for
    /// the same delta, while the join is a copy, checked when it was made (`DeltaJoiner`) and by
    /// its own size and hash since; `verify` applies it.
    private static func joinProblem(_ delta: ReleasedDelta, via: Int, of released: ReleasedVersion) -> String? {
        guard delta.from < via, via < released.version else {
            return "\(via) (expected a version between \(delta.from) and \(released.version), the one it was joined through)"
        }
        return nil
    }

    /// Why a delta's SQL cannot be checked by what its entry says (the key and the reason), or
    /// nil: a rendered delta has the hash of its SQL; a joined one has that or its parts', which
    /// add up to its size.
    private static func sqlProblem(_ delta: ReleasedDelta) -> (String, String)? {
        if let parts = delta.sqlParts {
            if delta.sqlSha256 != nil { return ("sql_sha256", "a hash of the whole SQL beside sql_parts (expected null)") }
            if delta.via == nil { return ("sql_parts", "parts of a delta rendered from the master (expected null, and the hash of its SQL)") }
            if parts.count < 2 { return ("sql_parts", "\(parts.count) part (expected at least 2: a joined delta's parts)") }
            let sum = parts.reduce(0) { $0 + $1.sqlBytes }
            if sum != delta.sqlBytes { return ("sql_parts", "\(sum) bytes of SQL in all, but sql_bytes is \(delta.sqlBytes)") }
            return nil
        }
        return delta.sqlSha256 == nil ? ("sql_sha256", "null, and no sql_parts (expected the hash of its SQL, or of each part)") : nil
    }

    /// Why a listed file is not where its entry belongs, or nil: its path alone.
    private static func placeProblem(_ entry: ReleasedFile, expected: String) -> String? {
        if let reason = unsafe(entry.path) { return reason }
        if entry.path != expected { return "not where this entry's file belongs (expected \(expected))" }
        return nil
    }

    /// Why a listed file is not what its entry says, or nil.
    private func fileProblem(_ entry: ReleasedFile, expected: String, hash: Bool) -> String? {
        if let reason = Self.placeProblem(entry, expected: expected) { return reason }
        // Every folder on the way must be a real folder, and the file a regular file: no link
        // may lead a server or a client out of the release folder.
        var prefix = ""
        for component in entry.path.split(separator: "/").dropLast() {
            prefix += (prefix.isEmpty ? "" : "/") + component
            if folderKinds.kind(filePath(prefix)) != S_IFDIR { return "\(prefix) is not a folder (expected a folder, never a link)" }
        }
        let full = filePath(entry.path)
        // One lstat for the kind and the size: a folder of 50 releases lists over 1,300 files.
        var status = stat()
        guard lstat(full, &status) == 0 else { return "the file is missing" }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFLNK: return "a symbolic link (expected a regular file)"
        default: return "not a regular file"
        }
        if Int(status.st_size) != entry.bytes { return "\(status.st_size) bytes, the manifest says \(entry.bytes)" }
        if hash {
            guard let digest = try? FileDigest.sha256(ofFile: full) else { return "cannot be read" }
            if digest != entry.sha256 { return "sha256 \(digest), the manifest says \(entry.sha256)" }
        }
        return nil
    }

    /// Why a manifest path may not be followed, or nil for a relative, normalised path.
    package static func unsafe(_ path: String) -> String? {
        if path.hasPrefix("/") { return "an absolute path (expected a path relative to the release folder)" }
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        if path.isEmpty || path.contains("\\") || path.contains("\u{0}")
            || components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) {
            return components.contains("..") ? "leads outside the release folder (expected a path inside it)"
                : "not a normalised path (expected VERSION/FILE, with no empty, . or .. part)"
        }
        return nil
    }

    /// What the folder holds that the manifest does not list, depth first, by name; not inside
    /// the folder of a version audited at `Depth.listed`.
    private func unlisted(listed: Set<String>) -> [ManifestProblem] {
        let folders = Set(listed.flatMap { path -> [String] in
            let parts = path.split(separator: "/").dropLast()
            return parts.indices.map { parts[...$0].joined(separator: "/") }
        })
        var problems: [ManifestProblem] = []
        func walk(_ relative: String) {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: relative.isEmpty ? folder : filePath(relative))) ?? []).sorted()
            for name in names {
                let path = relative.isEmpty ? name : relative + "/" + name
                if relative.isEmpty, folders.contains(path), let version = Int(path), depth(version) == .listed {
                    continue
                }
                if Self.kind(filePath(path)) == S_IFDIR && folders.contains(path) {
                    walk(path)
                } else if !listed.contains(path) && !(relative.isEmpty && Self.isLeftover(name)) {
                    let kind = Self.kind(filePath(path)) == S_IFDIR ? "folder" : "file"
                    problems.append(ManifestProblem(field: kind, file: path, reason: Self.unlistedReason))
                }
            }
        }
        walk("")
        return problems
    }

    /// What a release killed before its publish intent leaves: a build folder or a temporary
    /// file, never served (no manifest names it) and removed by the next release. Seen under the
    /// folder's lock, it belongs to a dead process.
    /// The publish intent is one too while a live release completes (a reader that finds it
    /// through a dead one is told so first: `verify` refuses the folder, `release` completes it).
    package static func isLeftover(_ name: String) -> Bool {
        name.hasPrefix(ReleaseLayout.buildingPrefix) || AtomicFile.isTemporaryName(name) || name == ReleaseLayout.publishIntentFileName
    }

    package static let unlistedReason =
        "not listed in the manifest (a release folder holds only what manifest.json lists, so that it can be served or uploaded as it is; move it away)"

    /// The file type (`S_IFREG`, `S_IFDIR`, `S_IFLNK`, …) of a path, without following a link; nil if absent.
    package static func kind(_ path: String) -> mode_t? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return status.st_mode & S_IFMT
    }
}

/// The kinds of the folders one audit passed through, each looked at once: every file of a
/// version lies in the same folder.
private final class FolderKinds {
    private var kinds: [String: mode_t?] = [:]

    func kind(_ path: String) -> mode_t? {
        if let known = kinds[path] { return known }
        let kind = ManifestAudit.kind(path)
        kinds[path] = kind
        return kind
    }
}
