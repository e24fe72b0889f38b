import StationSchema

/// Computes the map weights of a master's stations and writes them as a plan, and measures how
/// stations spread over a map's views.
///
/// A capability over the thin `MasterDatabase` handle, as GRDB's `DatabaseMigrator` takes a
/// writer: `try Weigher(master).…`.
public struct Weigher: Sendable {
    /// The master it weighs.
    public let master: MasterDatabase

    /// A weigher of `master`'s stations.
    public init(_ master: MasterDatabase) {
        self.master = master
    }
}
