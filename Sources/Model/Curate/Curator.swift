import StationSchema

/// Writes a curator's changes to a master as one new version each: a batch of operations, a plan
/// file, or the reversal of an older version.
///
/// A capability over the thin `MasterDatabase` handle, as GRDB's `DatabaseMigrator` takes a
/// writer: `try Curator(master).…`.
public struct Curator: Sendable {
    /// The master it writes to.
    public let master: MasterDatabase

    /// A curator of `master`.
    public init(_ master: MasterDatabase) {
        self.master = master
    }
}
