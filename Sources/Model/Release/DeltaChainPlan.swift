import Foundation
import StationManifest

/// Which deltas a release renders from the master, and which it joins from an earlier release's
/// delta and one of its own, so that its cost does not grow with the history behind it.
///
/// Rendering the delta from every older version makes a release's time grow with the number of
/// versions (each delta holds every change since its version). Instead, with the releases already
/// in the folder numbered 1, 2, … in order, a release at position p renders only the deltas
/// from the versions that are *checkpoints* of p, and from versions after the newest release:
///
/// - level 0: every release since the last multiple of `spacing`;
/// - level 1: every release at a multiple of `spacing` since the last multiple of `spacing`²;
/// - level 2: every multiple of `spacing`² since the last multiple of `spacing`³; and so on.
///
/// That is at most `spacing` − 1 versions a level, and log_spacing(p) levels. The delta from any
/// other version v is joined (`GzipJoin`): the delta from v that an earlier checkpoint release a
/// published, then this release's delta from a, where a is the oldest checkpoint after v. v was a
/// checkpoint of a one level down, so a phone's file passes through at most one version a level
/// (taking the smallest join instead lets the steps grow with history: 391 steps in 400 releases
/// in `DeltaChainTests`). Each step costs a phone the rows changed on both sides of it, and one
/// delta's fixed lines (the guard, about 300 bytes of gzip).
///
/// A join larger than the newest release's database is rendered instead (`MasterDatabase.release`),
/// as are the versions below.
///
/// Which versions are checkpoints decides only what is fast; every join is made only from files
/// the manifest lists, and a version no checkpoint has a delta from is rendered. A folder's first
/// release, with nothing to join, renders every delta; so does each release for a version that
/// checkpoints sent the database (its delta was larger then, but changes undone since can make it
/// small again), which at a percent of the stations changed a version begins after about a
/// hundred versions.
package struct DeltaChainPlan: Equatable, Sendable {
    /// The versions whose deltas this release renders, ascending.
    package var rendered: [Int]
    /// For each other version a delta can be joined for: the checkpoint (of `rendered`) it is
    /// joined through, the oldest after it whose release has a joinable delta from it.
    package var joinable: [Int: Int]

    /// The default spacing of checkpoints: closer ones render a long history's deltas faster
    /// for slightly larger files than deltas rendered alone; the history table of
    /// benchmarks/RESULTS.md weighs the two.
    package static let defaultSpacing = 4

    /// The plan of the release of `version`, into a folder whose manifest lists `released`
    /// (the releases of other versions are ignored but those older than `version`).
    /// `canJoin` tells whether an earlier release's delta file can be joined (`GzipJoin.isJoinable`).
    package static func make(version: Int, released: [ReleasedVersion], spacing: Int = defaultSpacing,
                             canJoin: (ReleasedDelta) -> Bool) -> DeltaChainPlan {
        precondition(spacing >= 2, "a spacing of checkpoints below 2")
        let earlier = released.filter { $0.version < version }.sorted { $0.version < $1.version }
        let checkpoints = checkpointPositions(releases: earlier.count, spacing: spacing).map { earlier[$0 - 1].version }.sorted()
        let isCheckpoint = Set(checkpoints)
        let newestReleased = earlier.last?.version ?? 0
        var plan = DeltaChainPlan(rendered: [], joinable: [:])
        let deltas = Dictionary(uniqueKeysWithValues: earlier.map { released in
            (released.version, Dictionary(released.deltas.map { ($0.from, $0) }, uniquingKeysWith: { first, _ in first }))
        })
        for from in 1..<max(version, 1) {
            let via = from > newestReleased || isCheckpoint.contains(from) ? nil
                : checkpoints.first { via in via > from && deltas[via]![from].map(canJoin) == true }
            if let via {
                plan.joinable[from] = via
            } else {
                plan.rendered.append(from)
            }
        }
        plan.rendered.sort()
        return plan
    }

    /// The positions (1-based, among `releases` earlier releases) that the next release renders a
    /// delta from: at each level L, the multiples of spacing^L after the last multiple of spacing^(L+1).
    package static func checkpointPositions(releases: Int, spacing: Int) -> Set<Int> {
        var positions: Set<Int> = []
        var step = 1
        while step <= releases {
            let (next, overflow) = step.multipliedReportingOverflow(by: spacing)
            let since = overflow ? 0 : releases / next * next
            var position = since + step
            while position <= releases {
                positions.insert(position)
                position += step
            }
            if overflow { break }
            step = next
        }
        return positions
    }
}
