import Foundation
import StationCheck
import StationManifest

/// How `release` runs.
public struct ReleaseOptions: Sendable {
    /// The release folder (`--out`), created if missing.
    public var outputFolder: String
    /// nil: the newest version.
    public var version: Int?
    /// Verify the release on the real `sqlite3` before publishing it (`--no-verify` turns it off).
    public var verify: Bool
    /// Release even while `check` finds an error that no waiver accepts.
    public var skipChecks = false
    /// The limits the checks run with.
    public var checkLimits = CheckLimits()
    /// Every how many releases a checkpoint falls (`DeltaChainPlan`): tests set it low to reach
    /// several levels with a few versions. A test seam, not the API's.
    package var checkpointSpacing = DeltaChainPlan.defaultSpacing
    /// How long to wait while another process writes the same release folder.
    public var lockTimeout: TimeInterval = 600
    /// Told once when the release waits for another process's lock (for a message on stderr).
    public var onWait: (@Sendable (String) -> Void)?
    /// Called after each step: the seam through which tests commit a version in the middle
    /// of a release, or kill the process at a chosen step. A test seam, not the API's.
    package var onStep: (@Sendable (ReleaseStep) throws -> Void)?
    /// Signs the manifest (`--sign`); nil: unsigned, refused in a folder already signed.
    public var signing: ManifestSigning?

    /// Options of a default `release`: the newest version, verified, checked.
    public init(outputFolder: String = "release", version: Int? = nil, verify: Bool = true) {
        self.outputFolder = outputFolder
        self.version = version
        self.verify = verify
    }
}

/// What a release published.
public struct ReleaseResult: Sendable {
    /// The version built, as the manifest lists it.
    public var released: ReleasedVersion
    /// The manifest as published.
    public var manifest: Manifest
    /// What `verify` checked; nil when not verified.
    public var verification: VerificationReport?
    /// The checks of the released version, read in the same state as the release; nil with `skipChecks`.
    public var checks: CheckTally?
    /// Set when this release first completed a publish that a killed release left half done.
    public var completedInterruptedVersion: Int?
    /// Build folders and temporary files of dead processes that this release removed.
    public var removedLeftovers: [String]
    /// Why the master could not record what was published (a read-only master, a full disk), if
    /// it could not: the release stands, and the next one learns it from the folder.
    public var publishedNotRecorded: String?
}
