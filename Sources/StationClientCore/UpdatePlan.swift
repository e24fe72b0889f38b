import Foundation
import GRDB
import StationManifest

/// What an update will do, from the verified manifest, before anything is downloaded: what
/// ``StationUpdater/check()`` returns and ``StationUpdater/update(_:appData:progress:)`` carries
/// out as it is (refusing it when the manifest or the database changed meanwhile).
///
/// ```swift
/// let plan = try await updater.check()
/// guard plan.method != .upToDate else { return }
/// if plan.downloadBytes > 20_000_000 && !userApprovedLargeDownloads { return }
/// try await updater.update(plan)            // or plan.preferringFull(), to replace every master table
/// ```
public struct UpdatePlan: Sendable, Equatable {
    /// How the database reaches the newest version.
    public enum Method: String, Sendable, Equatable {
        /// It is at the newest version.
        case upToDate = "up-to-date"
        /// The delta from its version, run in one transaction.
        case delta
        /// The full database, with the user's records and the app's tables carried over.
        case full
    }

    /// How.
    public let method: Method
    /// The database's data version now (0: a new install).
    public let from: Int
    /// The newest release's data version.
    public let to: Int
    /// What this plan downloads, in bytes (0 when up to date).
    public let downloadBytes: Int
    /// What the full download would take instead, in bytes (0 when up to date).
    public let fullDownloadBytes: Int
    /// The SHA-256 of the manifest this plan was made from.
    let manifestSHA256: String

    /// This plan with the full download instead of the delta (the same when it is already full
    /// or up to date).
    public func preferringFull() -> UpdatePlan {
        guard method == .delta else { return self }
        return UpdatePlan(method: .full, from: from, to: to, downloadBytes: fullDownloadBytes, fullDownloadBytes: fullDownloadBytes,
                          manifestSHA256: manifestSHA256)
    }
}

/// Which path an update takes, as the app's hook is told.
public enum UpdatePath: String, Sendable, Equatable {
    /// The delta ran in the database's own transaction.
    case delta
    /// A downloaded database replaced the master tables.
    case full
    /// The database bundled with the app replaced the master tables.
    case bundled
}

/// What the app's hook is told about the update it runs inside.
public struct UpdateContext: Sendable, Equatable {
    /// The path.
    public let path: UpdatePath
    /// The data version before.
    public let from: Int
    /// The data version after.
    public let to: Int
    /// The station splits between the two (after `from`, up to `to`), in the order recorded:
    /// the library has copied `completions` across them; an app moves its own tables' rows.
    public let splits: [ReleaseSplit]

    /// A context, as an app's tests of its hook make one.
    public init(path: UpdatePath, from: Int, to: Int, splits: [ReleaseSplit]) {
        self.path = path
        self.from = from
        self.to = to
        self.splits = splits
    }
}

/// The app's own update of its data, run inside the update's transaction in the app's database,
/// after the release's tables and `completions` are at the new version and before the commit, on
/// every path. Throwing rolls the whole update back.
///
/// ```swift
/// try await updater.update(appData: { db, context in
///     for split in context.splits {
///         try db.execute(sql: "INSERT OR IGNORE INTO visits (station_cd, day) SELECT ?, day FROM visits WHERE station_cd = ?",
///                        arguments: [split.new, split.old])
///     }
/// })
/// ```
public typealias AppDataHook = @Sendable (Database, UpdateContext) throws -> Void

/// How far an update is: the phase under way, what of it is done in the phase's one unit, and the
/// whole update's fraction, which never goes down.
public struct UpdateProgress: Sendable, Equatable {
    /// What is under way.
    public enum Stage: Sendable, Equatable {
        /// Downloading a file of the release (its path in the folder), in bytes.
        case downloading(String)
        /// Inflating the downloaded database, in bytes written.
        case inflating
        /// Writing the release into the database: the delta's SQL in bytes, or the release
        /// tables' rows.
        case installing
    }

    /// What `completed` and `total` count.
    public enum Unit: String, Sendable, Equatable {
        case bytes, rows
    }

    /// What is under way.
    public let stage: Stage
    /// Done in this stage.
    public let completed: Int
    /// In all, for this stage.
    public let total: Int
    /// What the two count.
    public let unit: Unit
    /// The whole update's fraction done, from 0 to 1; it never goes down from one value to the next.
    public let fractionCompleted: Double

    /// Progress of `stage`: `completed` of `total` `unit`s, the update `fractionCompleted` done.
    public init(stage: Stage, completed: Int, total: Int, unit: Unit, fractionCompleted: Double) {
        self.stage = stage
        self.completed = completed
        self.total = total
        self.unit = unit
        self.fractionCompleted = fractionCompleted
    }
}

/// An update started by ``StationUpdater/startUpdate(_:appData:)`` or
/// ``StationUpdater/startInstallingBundled(_:appData:)``: its progress as it goes, and its outcome.
///
/// ```swift
/// let running = updater.startUpdate(plan, appData: moveVisits)
/// for await step in running.progress { show(step.fractionCompleted) }
/// let outcome = try await running.outcome
/// ```
public struct RunningUpdate<Outcome: Sendable>: Sendable {
    /// What the update tells as it goes; it ends when the update does.
    public let progress: AsyncStream<UpdateProgress>
    private let task: Task<Outcome, any Error>

    init(_ body: @escaping @Sendable (AsyncStream<UpdateProgress>.Continuation) async throws -> Outcome) {
        let (progress, continuation) = AsyncStream.makeStream(of: UpdateProgress.self, bufferingPolicy: .bufferingNewest(64))
        self.progress = progress
        task = Task {
            defer { continuation.finish() }
            return try await body(continuation)
        }
    }

    /// What the update did, once it ends; throws what it threw.
    public var outcome: Outcome {
        get async throws { try await task.value }
    }

    /// Cancels the update: it stops at its next step, the database as it was.
    public func cancel() { task.cancel() }
}

/// The instants of an update, in order, at which `StationUpdater.Configuration.onStep` is told;
/// `station-phone` kills itself at one of them in the crash tests.
package enum UpdateStep: String, CaseIterable, Sendable {
    /// The update lock is held and what a killed update left is cleared.
    case locked
    /// A part of a download was written and synced.
    case downloadedPart = "downloaded-part"
    /// A download is whole and its SHA-256 is the manifest's.
    case downloaded
    /// Another 64 KiB of the downloaded database were inflated.
    case inflating
    /// The delta (and the app's hook) ran; the transaction is not committed yet.
    case deltaRunUncommitted = "delta-run-uncommitted"
    /// The delta committed; its downloaded files are not removed yet.
    case deltaCommitted = "delta-committed"
    /// The install's transaction holds the database's write lock; nothing is written yet.
    case replacing
    /// Another release table was replaced in the database, uncommitted.
    case replacingTable = "replacing-table"
    /// The records were copied across the splits and the app's hook ran, uncommitted.
    case carriedOver = "carried-over"
    /// The install committed; its downloaded files are not removed yet.
    case replaced
}

/// What an update did.
public struct UpdateOutcome: Equatable, Sendable {
    /// The plan it carried out.
    public let plan: UpdatePlan
    /// Bytes fetched by this call (a resumed download fetches only the rest).
    public let downloadedBytes: Int
    /// Where the download resumed; 0 when it started from the beginning.
    public let resumedAt: Int
}
