import Foundation
import StationClient
import Testing

/// Two processes of one app on one database, as an app and its background task or extension
/// run: two updates at once, or an update beside a launch that only reads. 200 trials, each path:
/// no record is lost, the database is never absent, and it ends old or new, whole.
@Suite(.serialized, .tags(.slow), .leftOutOfQuickRuns) struct ConcurrentUpdateTests {
    let scratch = Scratch()

    @Test func twoProcessesOnOneDatabaseNeverLoseARecord() throws {
        let folder = try ClientFolder(scratch)
        var outcomes: [String: Int] = [:]
        for trial in 0..<200 {
            // Full downloads (from 4), deltas (from 1) and the bundled database (from 2), in turn.
            let version = [4, 1, 2][trial % 3]
            let phone = try Phone(folder, at: version, in: scratch)
            let update = ["update", "--db", phone.path, "--from", folder.path, "--trust", folder.key.path + ".pub", "--part-bytes", "4096"]
            let bundled = ["install-bundled", "--db", phone.path, "--database", folder.newest + "/stations.sqlite"]
            let mine = version == 2 ? bundled : update
            // Every fourth trial, the other process only reads (a launch that shows the status).
            let other = trial % 4 == 3 ? ["status", "--db", phone.path] : mine
            let first = try StationPhoneProgram.start(mine), second = try StationPhoneProgram.start(other)
            let results = [first.finish(), second.finish()]
            for result in results {
                #expect(result.status == 0, "trial \(trial): \(result.output)")
            }
            #expect(FileManager.default.fileExists(atPath: phone.path), "trial \(trial): the database is gone")
            let state = try phone.state()
            #expect(state == "new", "trial \(trial) from \(version): \(state ?? "neither old nor new")")
            outcomes[results.map { $0.output.hasPrefix("updated") || $0.output.hasPrefix("installed") ? "updated" : "other" }.joined(separator: "+"),
                     default: 0] += 1
            #expect(try leftovers(of: phone) == [], "trial \(trial)")
        }
        // One of the two updates did the work, the other found nothing to do.
        #expect(outcomes["updated+updated", default: 0] == 0, "\(outcomes)")
    }
}
