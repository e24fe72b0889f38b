import Foundation
import StationClient
import StationManifest
import StationRelease
import StationSignatures
import StationSupport
import Testing

/// `station-phone` against a server that misbehaves as a hostile network does (TUF's endless-data
/// and slow-retrieval attacks, a lying proxy, a signed gzip bomb): each update is refused within
/// its deadline, holds no more than 64 MiB above what the process holds anyway, leaves no large
/// file behind, and leaves the database as it was but for the record of the manifest it verified
/// (written before any download: a cut update still refuses an older manifest next); the next
/// honest update works.
@Suite(.serialized, .tags(.slow), .leftOutOfQuickRuns) struct HostileNetworkTests {
    let scratch = Scratch()

    /// `Fixtures/hostile/hostile-server.py` over `folder`: the base URL of each behaviour.
    func hostile(_ folder: String) throws -> (RunningProgram, (String) -> String) {
        let script = Fixtures.root.appendingPathComponent("hostile/hostile-server.py").path
        let server = try RunningProgram("/usr/bin/env", ["python3", script, folder])
        try #require(server.wait(for: "listening on "), "\(server.stderr)")
        let port = server.stderr.components(separatedBy: "listening on ").last.flatMap { Int($0.prefix { $0.isNumber }) } ?? 0
        return (server, { mode in "http://127.0.0.1:\(port)/\(mode)/" })
    }

    struct Attempt {
        let outcome: StationPhoneProgram.Outcome
        let seconds: Double
        let peakKiB: Int
    }

    /// An update of `phone` from `base` (with a 2 s grace and 1 KiB/s at least), timed, its peak memory read.
    func attempt(_ phone: Phone, from base: String, _ folder: ClientFolder) throws -> Attempt {
        let started = Date()
        let outcome = try StationPhoneProgram.update(phone, from: base, folder, ["--grace", "2", "--idle-timeout", "10"],
                                                     environment: ["STATION_PHONE_PROFILE": "1"])
        return Attempt(outcome: outcome, seconds: Date().timeIntervalSince(started), peakKiB: StationPhoneProgram.peakMemory(outcome.output) ?? Int.max)
    }

    /// What the phone process holds for an honest update of the same folder: the baseline.
    func baselineKiB(_ folder: ClientFolder, _ base: String) throws -> Int {
        let phone = try Phone(folder, at: 4, in: scratch)
        let honest = try attempt(phone, from: base, folder)
        #expect(honest.outcome.status == 0, "\(honest.outcome.output)")
        return honest.peakKiB
    }

    /// The refusal `words`, in time and memory, nothing left behind, the database as it was; a
    /// manifest that verified (`verified`) before its file was refused is remembered.
    func expectRefused(_ attempt: Attempt, _ phone: Phone, before: [String], saying words: String, baseline: Int, verified: Bool = true,
                       sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(attempt.outcome.status == 1 && attempt.outcome.output.contains(words), "\(words): \(attempt.outcome.output)", sourceLocation: sourceLocation)
        #expect(attempt.seconds < 15, "took \(attempt.seconds) s", sourceLocation: sourceLocation)
        #expect(attempt.peakKiB - baseline < 64 << 10, "\(words): peak \(attempt.peakKiB) KiB against \(baseline)", sourceLocation: sourceLocation)
        #expect(try phone.contentBesideTrustRecord() == before, sourceLocation: sourceLocation)
        if verified {
            #expect(try phone.acceptedSequence() != nil, "the verified manifest is remembered", sourceLocation: sourceLocation)
        }
        let work = phone.path + ".update"
        for file in (try? FileManager.default.contentsOfDirectory(atPath: work)) ?? [] {
            let size = try FileManager.default.attributesOfItem(atPath: work + "/" + file)[.size] as? Int ?? 0
            #expect(size < 1 << 20, "\(file): \(size) bytes left behind", sourceLocation: sourceLocation)
        }
    }

    @Test func endlessSlowAndLyingAnswersAreCutAndTheDatabaseIsUntouched() throws {
        let folder = try ClientFolder(scratch)
        let (server, base) = try hostile(folder.path)
        defer { _ = server.stop(SIGTERM) }
        let baseline = try baselineKiB(folder, base("honest"))
        let cases: [(mode: String, version: Int, words: String)] = [
            ("endless-manifest", 4, "manifest.json: the server did not say how many bytes it sends"),
            ("huge-manifest", 4, "manifest.json: 1000000000000 bytes or more, over the 1048576 allowed"),
            ("endless-range", 4, "did not say how many bytes it sends"),
            ("endless-range", 1, "did not say how many bytes it sends"),
            ("slow", 4, "slower than allowed"),
            ("slow", 1, "slower than allowed"),
            ("lying-length", 4, "bytes or more, where the signed manifest says"),
        ]
        for (mode, version, words) in cases {
            let phone = try Phone(folder, at: version, in: scratch)
            let before = try phone.contentBesideTrustRecord()
            try expectRefused(try attempt(phone, from: base(mode), folder), phone, before: before, saying: words, baseline: baseline,
                              verified: !mode.hasSuffix("-manifest"))
            // The next honest update takes it to the newest version (resuming what arrived).
            let honest = try attempt(phone, from: base("honest"), folder)
            let state = try phone.state()
            #expect(honest.outcome.status == 0 && state == "new", "\(mode) then honest: \(honest.outcome.output)")
        }
    }

    @Test func aSignedGzipBombStopsAtTheSignedSize() throws {
        let folder = try ClientFolder(scratch)
        let (server, base) = try hostile(folder.path)
        defer { _ = server.stop(SIGTERM) }
        let baseline = try baselineKiB(folder, base("honest"))
        let bomb = scratch.path("bomb.gz")
        // 1 GiB of zeros: about 1 MB of gzip.
        let made = try CommandRunner.run(["-c", "head -c 1073741824 /dev/zero | gzip -1 -n > '\(bomb)'"], program: URL(fileURLWithPath: "/bin/sh"))
        try #require(made.status == 0, "\(made.stderr)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: bomb))
        var manifest = try folder.manifest()
        let newest = manifest.versions.count - 1
        // The database's gzip (the full path) and the delta from 1, each replaced by the bomb and
        // signed as it is: the sizes they must inflate to stay the true ones.
        let gzip = manifest.versions[newest].databaseGzip.path
        try bytes.write(to: folder.url.appendingPathComponent(gzip))
        manifest.versions[newest].databaseGzip = ReleasedFile(path: gzip, bytes: bytes.count, sha256: ManifestSignatures.sha256(bytes))
        let delta = try #require(manifest.versions[newest].deltas.firstIndex { $0.from == 1 })
        let deltaPath = manifest.versions[newest].deltas[delta].file.path
        try bytes.write(to: folder.url.appendingPathComponent(deltaPath))
        manifest.versions[newest].deltas[delta].file = ReleasedFile(path: deltaPath, bytes: bytes.count, sha256: ManifestSignatures.sha256(bytes))
        try folder.publish(manifest)
        for version in [4, 1] {
            let phone = try Phone(folder, at: version, in: scratch)
            let before = try phone.contentBesideTrustRecord()
            try expectRefused(try attempt(phone, from: base("honest"), folder), phone, before: before,
                              saying: "not a whole gzip file of the signed size", baseline: baseline)
            #expect(!FileManager.default.fileExists(atPath: phone.path + ".update/incoming.sqlite"))
        }
    }
}
