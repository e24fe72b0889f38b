import Foundation
import GRDB
import StationCurate
import StationManifest
import StationRelease
import StationSchema
import StationSignatures
import StationSupport
import Testing

/// Signed manifests (`release --sign`, `resign`, `verify --trust`) and what a phone that pins keys
/// does with them: `scripts/phone-client.py update`, Python's `cryptography` as an independent
/// Ed25519 verifier, with the real SQLite, against `serve` and nginx (`deploy/nginx.conf`).
/// Every refusal leaves the phone's database byte-identical.
@Suite(.serialized, .tags(.nginx), .leftOutOfQuickRuns) struct SignedManifestTests {
    let scratch = Scratch()

    struct Signed {
        let database: MasterDatabase
        let folder: String
        let key: SigningKey
        let dataset: String
    }

    /// Versions 1 to 3 released into one folder, each signed by a key of its own.
    func signedFolder() throws -> Signed {
        let database = try scratch.baseDatabase()
        let key = try SigningKey.generate(to: scratch.path("curator-key"))
        var options = ReleaseOptions(outputFolder: scratch.path("release"), verify: false)
        options.signing = ManifestSigning(keys: [key])
        try Publisher(database).release(options)
        for version in 2...3 {
            var batch = ChangeBatch()
            batch.put(.stations, stationRow(1120105, name: "三沢 \(version)", line: 11201))
            try Curator(database).commit(batch, memo: "v\(version)")
            try Publisher(database).release(options)
        }
        return Signed(database: database, folder: scratch.path("release"), key: key, dataset: try #require(try database.lineage()))
    }

    /// A phone at version 1 with one record of its user's.
    func phone(_ signed: Signed, name: String = "phone") throws -> String {
        let path = scratch.path("\(name)-\(UUID().uuidString).sqlite")
        try FileManager.default.copyItem(atPath: signed.folder + "/1/stations.sqlite", toPath: path)
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: "INSERT INTO completions (station_cd, date, memo, updated_at) VALUES (1120105, '2020-01-01', 'mine', 1)") }
        try queue.close()
        return path
    }

    /// `phone-client.py update`: its exit status and what it printed.
    func update(_ phone: String, _ base: String, trust: [String], dataset: String, state: String, now: String? = nil) throws -> CommandRunner.Result {
        var arguments = ["python3", Fixtures.repository.appendingPathComponent("scripts/phone-client.py").path, "update", base,
                         "--db", phone, "--dataset", dataset, "--state", state]
        for key in trust { arguments += ["--trust", key] }
        if let now { arguments += ["--now", now] }
        return try CommandRunner.run(arguments, program: URL(fileURLWithPath: "/usr/bin/env"))
    }

    func serve(_ folder: String) throws -> (RunningProgram, String) {
        let (server, port) = try startServe(folder, ["--quiet"])
        return (server, "http://127.0.0.1:\(port)")
    }

    func sha256(_ path: String) throws -> String { try FileDigest.sha256(ofFile: path) }

    @Test func aPhoneAcceptsASignedUpdateThroughServeAndNginx() throws {
        let signed = try signedFolder()
        let signatures = try ManifestSignatures.decode(try Data(contentsOf: URL(fileURLWithPath: signed.folder + "/manifest.json.sig")))
        #expect(signatures.signatures.map(\.keyID).contains(signed.key.publicKey.id))
        let manifest = try Manifest.decode(try Data(contentsOf: URL(fileURLWithPath: signed.folder + "/manifest.json")))
        #expect(manifest.sequence == 3 && manifest.dataset == signed.dataset && manifest.newest == 3)
        for (server, base) in [try serve(signed.folder), try scratch.nginx(serving: signed.folder)] {
            defer { _ = server.stop(SIGTERM) }
            let phone = try phone(signed)
            let state = scratch.path("state-\(UUID().uuidString).json")
            let result = try update(phone, base, trust: [signed.key.path + ".pub"], dataset: signed.dataset, state: state)
            #expect(result.status == 0 && result.stdout == "updated to 3 by delta\n", "\(base): \(result.stdout)\(result.stderr)")
            #expect(try sqlite3Query("PRAGMA user_version; SELECT memo FROM completions", database: phone) == "3\nmine")
            let again = try update(phone, base, trust: [signed.key.path + ".pub"], dataset: signed.dataset, state: state)
            #expect(again.stdout == "up to date\n", "\(again.stdout)")
        }
        // verify --trust names the key; without --trust it says the folder is signed.
        let verified = try Publisher(signed.database).verifyRelease(folder: signed.folder, trust: [signed.key.publicKey])
        #expect(verified.failures.isEmpty && verified.passed[0].hasPrefix("manifest signed by trusted key \(signed.key.publicKey.id); sequence 3"))
        #expect(verified.warnings.isEmpty)
    }

    @Test func aPhoneRefusesEveryTamperingAndKeepsItsDatabase() throws {
        let signed = try signedFolder()
        let (server, base) = try scratch.nginx(serving: signed.folder)
        defer { _ = server.stop(SIGQUIT) }
        let manifestPath = signed.folder + "/manifest.json", signaturePath = signed.folder + "/manifest.json.sig"
        let goodManifest = try Data(contentsOf: URL(fileURLWithPath: manifestPath))
        let goodSignatures = try Data(contentsOf: URL(fileURLWithPath: signaturePath))
        let trust = [signed.key.path + ".pub"]
        let other = try SigningKey.generate(to: scratch.path("stranger-key"))

        func refused(_ what: String, reason: String, dataset: String? = nil, now: String? = nil, state: String? = nil) throws {
            let phone = try phone(signed)
            let before = try sha256(phone)
            let result = try update(phone, base, trust: trust, dataset: dataset ?? signed.dataset,
                                    state: state ?? scratch.path("state-\(UUID().uuidString).json"), now: now)
            #expect(result.status == 1 && result.stdout.hasPrefix("REFUSED: ") && result.stdout.contains(reason), "\(what): \(result.stdout)\(result.stderr)")
            #expect(try sha256(phone) == before, "\(what): the phone's database changed")
        }
        func restore() throws {
            try goodManifest.write(to: URL(fileURLWithPath: manifestPath))
            try goodSignatures.write(to: URL(fileURLWithPath: signaturePath))
        }

        // The manifest changed by one byte.
        var changed = goodManifest
        let at = try #require(changed.firstIndex(of: UInt8(ascii: "\"")))
        changed[at + 1] ^= 0x01
        try changed.write(to: URL(fileURLWithPath: manifestPath))
        try refused("one byte", reason: "no signature of this manifest")
        try restore()

        // A delta replaced by one that empties the user's records, its entry changed to match.
        let deltaPath = signed.folder + "/3/delta-from-1.sql.gz"
        let goodDelta = try Data(contentsOf: URL(fileURLWithPath: deltaPath))
        let hostileSQL = scratch.path("hostile.sql")
        try Data("DELETE FROM completions;".utf8).write(to: URL(fileURLWithPath: hostileSQL))
        _ = try ParallelGzip.compress(file: hostileSQL, to: deltaPath)
        let hostile = try Data(contentsOf: URL(fileURLWithPath: deltaPath))
        var text = String(decoding: goodManifest, as: UTF8.self)
        let manifest = try Manifest.decode(goodManifest)
        let entry = try #require(manifest.version(3)?.deltas.first { $0.from == 1 })
        text = text.replacingOccurrences(of: entry.file.sha256, with: FileDigest.sha256(hostile))
            .replacingOccurrences(of: "\"bytes\" : \(entry.file.bytes),", with: "\"bytes\" : \(hostile.count),")
        try Data(text.utf8).write(to: URL(fileURLWithPath: manifestPath))
        try refused("a delta and its entry changed, not re-signed", reason: "no signature of this manifest")
        try goodDelta.write(to: URL(fileURLWithPath: deltaPath))
        try restore()

        // Signed by a key the app does not pin; a truncated and a garbled signature file.
        try ManifestResigning.signAsIs(folder: signed.folder, signing: ManifestSigning(keys: [other]))
        try refused("an unknown key", reason: "no signature by a pinned key")
        try restore()
        try goodSignatures.prefix(goodSignatures.count / 2).write(to: URL(fileURLWithPath: signaturePath))
        try refused("a truncated signature file", reason: "truncated or garbled")
        var garbled = goodSignatures
        garbled[garbled.count / 2] = UInt8(ascii: "}")
        try garbled.write(to: URL(fileURLWithPath: signaturePath))
        try refused("a garbled signature file", reason: "truncated or garbled")
        try restore()

        // Another dataset's app; an expired manifest (the phone's clock set forward).
        try refused("another dataset", reason: "dataset", dataset: "another-lineage")
        let expires = try #require(manifest.expires)
        try refused("expired", reason: "expired at \(expires)", now: "2099-01-01T00:00:00Z")

        // A replayed older manifest: the phone accepted sequence 4, then is served sequence 3.
        let state = scratch.path("state-rollback.json")
        try ManifestResigning.resign(folder: signed.folder, signing: ManifestSigning(keys: [signed.key]))
        let accepted = try update(try phone(signed), base, trust: trust, dataset: signed.dataset, state: state)
        #expect(accepted.status == 0, "\(accepted.stdout)")
        try restore()
        try refused("rollback", reason: "sequence 3 is below 4", state: state)

        // A clock set back: a manifest signed long ago (sequence 5, expired 19 days before the
        // newest published_at the phone has seen) is refused though the phone's clock says 25 days
        // before that.
        let seen = try #require(SignedManifestFieldsProbe.publishedAt(state))
        let longAgo = ManifestSigning(keys: [signed.key], validity: 86_400, now: seen.addingTimeInterval(-20 * 86_400))
        try ManifestResigning.resign(folder: signed.folder, signing: longAgo)
        let setBack = SignedManifest.Fields.timestamp(seen.addingTimeInterval(-25 * 86_400))
        try refused("a clock set back before published_at", reason: "expired", now: setBack, state: state)
        try restore()
    }

    @Test func aRotationIsAcceptedByAnAppThatPinsEitherKeyThenTheRetiredKeyIsRefused() throws {
        let signed = try signedFolder()
        let (server, base) = try serve(signed.folder)
        defer { _ = server.stop(SIGTERM) }
        let next = try SigningKey.generate(to: scratch.path("next-key"))
        try ManifestResigning.resign(folder: signed.folder, signing: ManifestSigning(keys: [signed.key, next]))
        for pinned in [signed.key, next] {
            let result = try update(try phone(signed), base, trust: [pinned.path + ".pub"], dataset: signed.dataset,
                                    state: scratch.path("state-\(UUID().uuidString).json"))
            #expect(result.status == 0, "pinning \(pinned.publicKey.id) during the rotation: \(result.stdout)")
        }
        // The new app dropped the old key; a manifest signed by the old key alone is refused.
        try ManifestResigning.resign(folder: signed.folder, signing: ManifestSigning(keys: [signed.key]))
        let phone = try phone(signed)
        let before = try sha256(phone)
        let result = try update(phone, base, trust: [next.path + ".pub"], dataset: signed.dataset, state: scratch.path("state-dropped.json"))
        #expect(result.status == 1 && result.stdout.contains("no signature by a pinned key"), "\(result.stdout)")
        #expect(try sha256(phone) == before)
    }

    @Test func keysAreNeverOverwrittenAndAReadablePrivateKeyIsRefused() throws {
        let path = scratch.path("key")
        let key = try SigningKey.generate(to: path)
        #expect(throws: SigningKeyError.exists(path)) { try SigningKey.generate(to: path) }
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o600)
        #expect(try TrustedKey(contentsOfFile: path + ".pub") == key.publicKey)
        chmod(path, 0o644)
        #expect(throws: SigningKeyError.readableByOthers(path, mode: 0o644)) { try SigningKey(contentsOfFile: path) }
        chmod(path, 0o600)
        #expect(try SigningKey(contentsOfFile: path).publicKey == key.publicKey)
        // An unsigned release into a signed folder is refused: phones that pin keys would refuse it.
        let signed = try signedFolder()
        let before = try folderFiles(signed.folder)
        #expect(throws: ReleaseError.signingRequired(signed.folder + "/manifest.json.sig")) {
            try Publisher(signed.database).release(ReleaseOptions(outputFolder: signed.folder, verify: false))
        }
        #expect(try folderFiles(signed.folder) == before)
    }

    /// `--expires-in`: a positive, finite duration of at most a year.
    @Test func anExpiryIsAPositiveDurationOfAtMostAYear() {
        #expect(ManifestSigning.validity(parsing: "30d") == TimeInterval(30 * 86_400))
        #expect(ManifestSigning.validity(parsing: "12h") == TimeInterval(12 * 3_600))
        #expect(ManifestSigning.validity(parsing: "90m") == TimeInterval(90 * 60))
        #expect(ManifestSigning.validity(parsing: "7") == TimeInterval(7 * 86_400))
        for refused in ["0", "-1d", "infd", "nan", "400d", "1e9", "d", ""] {
            #expect(ManifestSigning.validity(parsing: refused) == nil, "\(refused)")
        }
    }

    /// Golden vectors (Tests/ModelTests/Fixtures/golden/signing): a fixed key, a manifest and its
    /// signature, for an app in another language to check its verifier against ours.
    @Test func theGoldenVectorsVerifyAndOurSigningGivesTheirSignature() throws {
        let golden = Fixtures.root.appendingPathComponent("golden/signing")
        let seed = try #require(Data(hexString: try String(contentsOf: golden.appendingPathComponent("seed.hex"), encoding: .utf8)))
        let key = try SigningKey(rawRepresentation: seed)
        let pinned = try TrustedKey(contentsOfFile: golden.appendingPathComponent("key.pub").path)
        #expect(key.publicKey == pinned)
        let manifest = try Data(contentsOf: golden.appendingPathComponent("manifest.json"))
        let signatures = try Data(contentsOf: golden.appendingPathComponent("manifest.json.sig"))
        let trust = ManifestTrust(keys: [pinned], dataset: "golden-dataset")
        let accepted = try trust.check(manifest: manifest, signatures: signatures, now: Date(timeIntervalSince1970: 1_790_000_000))
        #expect(accepted.fields.sequence == 7 && accepted.keyIDs == [pinned.id])
        // Ed25519 is deterministic (RFC 8032): our signature is the vector's, byte for byte.
        #expect(try ManifestSignatures.decode(signatures).signatures == [try key.sign(manifest: manifest)])
        #expect(throws: SignatureError.expired(expires: "2026-12-31T00:00:00Z", now: "2027-01-01T00:00:00Z")) {
            try trust.check(manifest: manifest, signatures: signatures, now: Date(timeIntervalSince1970: 1_798_761_600))
        }
    }
}

/// The newest `published_at` a phone's state file records.
enum SignedManifestFieldsProbe {
    static func publishedAt(_ state: String) -> Date? {
        guard let data = FileManager.default.contents(atPath: state),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let text = object["published_at"] as? String else { return nil }
        let formatter = ISO8601DateFormatter()
        return formatter.date(from: text)
    }
}

extension Data {
    init?(hexString: String) {
        let digits = Array(hexString.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.init(bytes)
    }
}
