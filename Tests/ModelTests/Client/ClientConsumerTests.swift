import Foundation
import Testing

/// An app's package that depends on this one for `StationClient` (by URL and a version tag, the
/// curator's tools turned off) resolves only GRDB, swift-crypto and swift-asn1, builds and runs:
/// `scripts/client-consumer` does it from a copy of the working tree.
@Suite(.tags(.slow), .leftOutOfQuickRuns) struct ClientConsumerTests {
    @Test func anAppResolvesOnlyWhatTheClientNeeds() throws {
        let script = Fixtures.repository.appendingPathComponent("scripts/client-consumer").path
        let result = try CommandRunner.run([script], program: URL(fileURLWithPath: "/bin/bash"))
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("an app resolves grdb.swift stations-kit swift-asn1 swift-crypto, builds the guide's example with its one import and runs"), "\(result.stdout)")
    }
}
