import Foundation
import StationManifest
import StationRelease
import StationSchema
import Testing

/// A release writes its manifest from the bytes of the one it read, with its own version's
/// encoding appended (`Manifest.encoded(extending:)`): the same bytes as encoding it all, which
/// grows with the square of the versions.
@Suite struct ManifestEncodingTests {
    @Test(arguments: [nil, "7fbf6a85-26d2-4e51-8669-d967946ed766", "a \"quoted\" / back\\slash\nlineage"])
    func appendingAVersionWritesWhatEncodingItAllWrites(lineage: String?) throws {
        var previous = Manifest(lineage: lineage, newest: 1, versions: [Self.version(1)])
        for number in 2...12 {
            var next = previous
            next.versions.append(Self.version(number))
            next.newest = number
            let extended = try next.encoded(extending: ManifestFile(manifest: previous, bytes: try previous.encoded()))
            #expect(extended == (try next.encoded()), "version \(number)")
            previous = next
        }
    }

    @Test func theOlderVersionsTextIsTakenFromTheBytesRead() throws {
        let previous = Manifest(lineage: "lineage", newest: 3, versions: (1...3).map { Self.version($0) })
        // The same JSON, one older value spaced otherwise than `encoded()` spaces it.
        let encoded = String(decoding: try previous.encoded(), as: UTF8.self)
        let spaced = encoded.replacingOccurrences(of: "\"content_hash\" : \"hash-2\"", with: "\"content_hash\" :   \"hash-2\"")
        #expect(spaced != encoded)
        var next = previous
        next.versions.append(Self.version(4))
        next.newest = 4
        let extended = try next.encoded(extending: ManifestFile(manifest: previous, bytes: Data(spaced.utf8)))
        #expect(String(decoding: extended, as: UTF8.self).contains("\"content_hash\" :   \"hash-2\""))
        #expect(try Manifest.decode(extended) == next)
    }

    /// A folder of format 4 has no `sql_parts`: its deltas read with none, their hash of the whole kept.
    @Test func aManifestOfFormatFourReadsWithNoParts() throws {
        var written = Manifest(lineage: "lineage", newest: 3, versions: (1...3).map { Self.version($0) })
        written.format = 4
        for version in written.versions.indices {
            for delta in written.versions[version].deltas.indices where written.versions[version].deltas[delta].sqlParts != nil {
                written.versions[version].deltas[delta].sqlParts = nil
                written.versions[version].deltas[delta].sqlSha256 = "whole"
            }
        }
        let lines = String(decoding: try written.encoded(), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let formatFour = lines.filter { !$0.contains("\"sql_parts\" : null") }.joined(separator: "\n")
        #expect(formatFour.count < lines.joined(separator: "\n").count)
        #expect(try Manifest.decode(Data(formatFour.utf8)) == written)
    }

    @Test func anythingButOneNewerVersionAppendedToBytesAsEncodedIsEncodedWhole() throws {
        let previous = Manifest(lineage: "lineage", newest: 3, versions: (1...3).map { Self.version($0) })
        let bytes = try previous.encoded()
        let compact = try JSONEncoder().encode(previous)
        var appended = previous
        appended.versions.append(Self.version(4))
        appended.newest = 4
        var replaced = previous
        replaced.versions[2] = Self.version(3, hash: "rebuilt")
        var older = Manifest(lineage: "lineage", newest: 5, versions: [1, 2, 5].map { Self.version($0) })
        older.versions.insert(Self.version(3), at: 2)
        var relineaged = appended
        relineaged.lineage = "another"
        var earlierFormat = previous
        earlierFormat.format = Manifest.currentFormat - 1
        let cases: [(String, Manifest, ManifestFile)] = [
            ("the bytes read otherwise spaced", appended, ManifestFile(manifest: previous, bytes: compact)),
            ("the bytes read cut short", appended, ManifestFile(manifest: previous, bytes: bytes.dropLast())),
            ("the newest version built again", replaced, ManifestFile(manifest: previous, bytes: bytes)),
            ("an older version added", older, ManifestFile(manifest: Manifest(lineage: "lineage", newest: 5, versions: [1, 2, 5].map { Self.version($0) }),
                                                             bytes: bytes)),
            ("another lineage", relineaged, ManifestFile(manifest: previous, bytes: bytes)),
            ("a manifest of an earlier format read", appended, ManifestFile(manifest: earlierFormat, bytes: bytes)),
        ]
        for (label, manifest, previous) in cases {
            #expect(try manifest.encoded(extending: previous) == manifest.encoded(), "\(label)")
        }
    }

    /// A version with a bit of everything a manifest holds: deltas rendered and joined, a full
    /// download with its carry-over, paths with characters JSON escapes or not.
    static func version(_ number: Int, hash: String? = nil) -> ReleasedVersion {
        let database = ReleasedFile(path: "\(number)/stations.sqlite", bytes: 1000 + number, sha256: "db-\(number)")
        let gzip = ReleasedFile(path: "\(number)/stations.sqlite.gz", bytes: 400 + number, sha256: "gz-\(number)")
        let carryOver = number % 3 == 0 ? nil : ReleasedFile(path: "\(number)/carry-over.sql", bytes: 7, sha256: "駅/\"\(number)\"")
        // Joined deltas listed by part, and (as format 4 wrote them) by the hash of the whole.
        let deltas = (1..<number).map { from in
            let via = from % 4 == 0 ? nil : from + 1
            let parts = via != nil && from % 4 != 3
                ? [DeltaSQLPart(sqlBytes: 60 * from, sqlSha256: "p-\(from)"), DeltaSQLPart(sqlBytes: 40 * from, sqlSha256: "p-\(from + 1)")] : nil
            return ReleasedDelta(from: from, to: number,
                                 file: ReleasedFile(path: "\(number)/delta-from-\(from).sql.gz", bytes: 10 * from, sha256: "d-\(from)"),
                                 sqlBytes: 100 * from, sqlSha256: parts == nil ? "s-\(from)" : nil, sqlParts: parts,
                                 statements: ["stations": ["update": from, "upsert": 1, "delete": 0], "lines": [:]],
                                 duplicates: from % 2, via: via)
        }
        var downloads = deltas.map { ClientDownload(from: $0.from, kind: .delta, path: $0.file.path) }
        if number > 2 { downloads[0] = ClientDownload(from: 1, kind: .full, path: gzip.path, carryOver: carryOver?.path) }
        return ReleasedVersion(version: number, database: database, databaseGzip: gzip, rows: ["stations": 10 * number, "lines": 2],
                               contentHash: hash ?? "hash-\(number)", deltas: deltas, carryOver: carryOver,
                               downloads: downloads, clientSchema: 1 + number / 5, splits: [StationSplit(old: 1, new: Int64(100 + number), version: number)])
    }
}
